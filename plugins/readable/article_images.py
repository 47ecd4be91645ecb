"""Copies of the article's images, so that the reader view never loads anything from the
archived site (the sanitiser points each image at its copy and drops one without).

An image the browser already loaded is taken from the snapshot's browser WARC
(`../traffic/browser.warc.gz`, written by the egress proxy, which checked its address): the
same bytes the page showed, with no second request. One the browser was answered with an
error (a 404, say) is left out without asking again: the page showed no image either. The
others are fetched through the
address-checked fetch (shared.fetching: every hop's target checked against the target
policy and connected to by its checked address, byte cap, timeouts), except those on a
host the browser could not reach (the egress proxy's failures and refusals in
`../navigate/navigate.json`): asking a host that let the page's request time out again
would only spend the hook's time. Each is kept as `images/<n>.<ext>` when its bytes are a
raster image a browser shows without running anything (PNG, JPEG, GIF, WebP: never SVG).
At most `limit` images, four fetches at a time, all within `seconds`; an image that fails,
is cut at the cap or is another type is left out.
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from shared.fetching.exchange import FetchLimits
from shared.fetching.sniffing import SNIFF_BYTES, sniff
from shared.platforms.http import Client
from shared.targets import origin_key

FOLDER = "images"
KEPT_TYPES = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}
"""Image types kept, with their file endings (the web serves these inline)."""
AT_ONCE = 4
FETCH_WAIT_S = 5.0
"""Seconds one fetched image may take to connect and to answer (at most `seconds`)."""


@dataclass(frozen=True)
class ImageLimits:
    """The bounds of copying one article's images."""

    limit: int
    """Images copied at most (the first ones of the article)."""
    max_bytes: int
    """Bytes of one image; a larger one is left out."""
    seconds: float
    """All the copies together; those not done by then are left out."""


@dataclass(frozen=True)
class BrowserSaw:
    """What the snapshot's browser already did, read from the earlier hooks' files."""

    warc: Path | None = None
    """The browser's WARC (its responses), when the traffic hook wrote one."""
    unreachable: frozenset[str] = frozenset()
    """Origins (`host:port`) the egress proxy could not reach or refused."""

    @classmethod
    def of_snapshot(cls, snapshot: Path) -> BrowserSaw:
        warc = snapshot / "traffic" / "browser.warc.gz"
        unreachable: set[str] = set()
        try:
            nav = json.loads((snapshot / "navigate" / "navigate.json").read_text())
            for entry in (*nav.get("failed", []), *nav.get("refused", [])):
                if isinstance(entry, dict) and isinstance(entry.get("origin"), str):
                    unreachable.add(entry["origin"].lower())
        except (OSError, ValueError, AttributeError, TypeError):
            pass
        return cls(warc if warc.is_file() else None, frozenset(unreachable))


def copy_images(
    sources: list[str],
    bounds: ImageLimits,
    *,
    user_agent: str,
    allow_private: bool,
    snapshot: Path | None = None,
) -> dict[str, str]:
    """Copy the images into `images/` (in the working directory): source -> relative path
    of its copy, for each one kept. `snapshot`: the snapshot's folder, whose browser WARC
    and navigation record are read (None: every image is fetched)."""
    if not sources or bounds.limit <= 0:
        return {}
    saw = BrowserSaw.of_snapshot(snapshot) if snapshot is not None else BrowserSaw()
    folder = Path(FOLDER)
    folder.mkdir(exist_ok=True)
    wanted = list(enumerate(sources[: bounds.limit], 1))
    kept, answered = _from_warc(saw.warc, wanted, bounds.max_bytes) if saw.warc else ({}, set())
    rest = [(n, s) for n, s in wanted if s not in answered and origin_key(s) not in saw.unreachable]
    kept.update(asyncio.run(_copy_all(rest, bounds, user_agent, allow_private)))
    for stray in folder.glob("*.download"):  # a download cancelled as its file was moved in
        stray.unlink()
    if not kept:
        folder.rmdir()
    return kept


def _from_warc(
    warc: Path, wanted: list[tuple[int, str]], max_bytes: int
) -> tuple[dict[str, str], set[str]]:
    """The wanted images whose whole response (2xx, not truncated) the browser's WARC holds,
    each written to its copy (source -> relative path), and every wanted source the WARC
    holds a whole response of, whatever its status (those need no second request)."""
    number = {src: n for n, src in wanted}
    kept: dict[str, str] = {}
    answered: set[str] = set()
    try:
        with warc.open("rb") as stream:
            for record in ArchiveIterator(stream):
                src = record.rec_headers.get_header("WARC-Target-URI") or ""
                if record.rec_type != "response" or src not in number or src in kept:
                    continue
                http = record.http_headers
                if http is None or record.rec_headers.get_header("WARC-Truncated"):
                    continue
                answered.add(src)
                if not http.get_statuscode().startswith("2"):
                    continue
                body = record.content_stream().read(max_bytes + 1)
                if len(body) > max_bytes:
                    continue
                ending = KEPT_TYPES.get(
                    sniff(http.get_header("Content-Type") or "", body[:SNIFF_BYTES]).effective
                )
                if ending is None:
                    continue
                name = f"{FOLDER}/{number[src]}{ending}"
                Path(name).write_bytes(body)
                kept[src] = name
    except (OSError, ValueError, EOFError) as exc:  # a broken WARC: fetch what is missing
        print(f"readable: browser WARC not read: {exc}", file=sys.stderr)
    return kept, answered


async def _copy_all(
    sources: list[tuple[int, str]], bounds: ImageLimits, user_agent: str, allow_private: bool
) -> dict[str, str]:
    kept: dict[str, str] = {}
    if not sources:
        return kept
    gate = asyncio.Semaphore(AT_ONCE)
    wait = min(bounds.seconds, FETCH_WAIT_S)
    limits = FetchLimits(
        total_timeout=bounds.seconds,
        header_timeout=wait,
        idle_timeout=wait,
        connect_timeout=wait,
        max_bytes=bounds.max_bytes,
        max_redirects=5,
    )

    async def one(client: Client, n: int, src: str) -> None:
        async with gate:
            got = await client.download(src, Path(FOLDER) / f"{n}.download")
        if got.path is None:
            return
        ending = KEPT_TYPES.get(got.content_type)
        if ending is None:
            got.path.unlink(missing_ok=True)
            return
        name = f"{FOLDER}/{n}{ending}"
        got.path.rename(name)
        kept[src] = name

    with Client(limits, user_agent=user_agent, allow_private=allow_private,
                media_max_bytes=bounds.max_bytes) as client:  # fmt: skip
        tasks = [asyncio.create_task(one(client, n, s)) for n, s in sources]
        try:
            async with asyncio.timeout(bounds.seconds):
                await asyncio.gather(*tasks)
        except TimeoutError:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    return kept
