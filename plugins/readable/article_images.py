"""Copies of the article's images, so that the reader view never loads anything from the
archived site (the sanitiser points each image at its copy and drops one without).

Each source is fetched through the address-checked fetch (shared.fetching: every hop's
target checked against the target policy and connected to by its checked address, byte cap,
timeouts) and kept as `images/<n>.<ext>` when its bytes are a raster image a browser shows
without running anything (PNG, JPEG, GIF, WebP: never SVG). At most `limit` images, four at
a time, all within `seconds`; an image that fails, is cut at the cap or is another type is
left out.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from shared.fetching.exchange import Fetch, FetchLimits, FetchResult

FOLDER = "images"
KEPT_TYPES = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}
"""Image types kept, with their file endings (the web serves these inline)."""
AT_ONCE = 4


@dataclass(frozen=True)
class ImageLimits:
    """The bounds of copying one article's images."""

    limit: int
    """Images copied at most (the first ones of the article)."""
    max_bytes: int
    """Bytes of one image; a larger one is left out."""
    seconds: float
    """All the copies together; those not done by then are left out."""


def copy_images(
    sources: list[str], bounds: ImageLimits, *, user_agent: str, allow_private: bool
) -> dict[str, str]:
    """Copy the images into `images/` (in the working directory): source -> relative path
    of its copy, for each one kept."""
    if not sources or bounds.limit <= 0:
        return {}
    folder = Path(FOLDER)
    folder.mkdir(exist_ok=True)
    kept = asyncio.run(_copy_all(sources[: bounds.limit], bounds, user_agent, allow_private))
    if not kept:
        folder.rmdir()
    return kept


async def _copy_all(
    sources: list[str], bounds: ImageLimits, user_agent: str, allow_private: bool
) -> dict[str, str]:
    kept: dict[str, str] = {}
    gate = asyncio.Semaphore(AT_ONCE)
    limits = FetchLimits(
        total_timeout=bounds.seconds,
        header_timeout=min(bounds.seconds, 10.0),
        idle_timeout=min(bounds.seconds, 10.0),
        connect_timeout=min(bounds.seconds, 10.0),
        max_bytes=bounds.max_bytes,
        max_redirects=5,
        store_not_html=True,
    )

    async def one(n: int, src: str, scratch: Path) -> None:
        async with gate:
            workdir = scratch / str(n)
            workdir.mkdir()
            fetch = Fetch(
                limits, user_agent=user_agent, allow_private=allow_private, workdir=workdir
            )
            ending = _image_ending(await fetch.run(src))
            if ending is not None and fetch.result.body is not None:
                name = f"{FOLDER}/{n}{ending}"
                shutil.move(fetch.result.body, name)
                kept[src] = name

    with tempfile.TemporaryDirectory(prefix="readable-images-") as scratch:
        tasks = [asyncio.create_task(one(n, s, Path(scratch))) for n, s in enumerate(sources, 1)]
        try:
            async with asyncio.timeout(bounds.seconds):
                await asyncio.gather(*tasks)
        except TimeoutError:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    return kept


def _image_ending(res: FetchResult) -> str | None:
    """The file ending of a fetched image worth keeping, None to leave it out."""
    whole = res.error in (None, "NOT_HTML") and not res.truncated and res.body is not None
    ok = res.response is not None and 200 <= res.response.status < 300
    if not (whole and ok and res.sniffed is not None):
        return None
    return KEPT_TYPES.get(res.sniffed.effective)
