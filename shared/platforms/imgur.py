"""Imgur: yt-dlp's extraction (videos, GIFs, albums), then Imgur's oEmbed
(`IMGUR_OEMBED_URL`) for the title and the image."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from shared.platforms.chain import Chain, Context, PostRef
from shared.platforms.embeds import oembed, ytdlp_step
from shared.platforms.facts import imgur_site as facts
from shared.platforms.outcome import StepOutcome

PLATFORM = "imgur"
BASES: tuple[str, ...] = ("IMGUR_OEMBED_URL",)
"""The settings naming its API base URLs."""
POST_PATH = re.compile(
    r"^/(?:(?P<kind>gallery|a|t/[^/]+)/)?(?P<id>[A-Za-z0-9]{5,10})(?:\.\w{3,4})?/?$"
)


def recognise(url: str) -> PostRef | None:
    """An Imgur image, album or gallery post, or None."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if host not in facts.POST_HOSTS:
        return None
    m = POST_PATH.match(parts.path or "/")
    if m is None:
        return None
    kind = {"a": "album", "gallery": "gallery"}.get(m.group("kind") or "", "image")
    return PostRef(PLATFORM, m.group("id"), url, kind=kind)


async def oembed_step(ctx: Context, ref: PostRef) -> StepOutcome:
    """Imgur's oEmbed."""
    return await oembed(ctx, ref, "IMGUR_OEMBED_URL")


CHAIN: Chain = (("yt-dlp", ytdlp_step), ("oembed", oembed_step))
