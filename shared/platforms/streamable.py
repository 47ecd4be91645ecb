"""Streamable: yt-dlp's extraction, then Streamable's oEmbed (`STREAMABLE_OEMBED_URL`) for
the metadata alone."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from shared.platforms.chain import Chain, Context, PostRef
from shared.platforms.embeds import oembed, ytdlp_step
from shared.platforms.facts import streamable_site as facts
from shared.platforms.outcome import StepOutcome

PLATFORM = "streamable"
BASES: tuple[str, ...] = ("STREAMABLE_OEMBED_URL",)
"""The settings naming its API base URLs."""
VIDEO_PATH = re.compile(r"^/(?:[eso]/)?(?P<id>[A-Za-z0-9]{3,20})/?$")


def recognise(url: str) -> PostRef | None:
    """A Streamable video (`/<id>`, `/e/<id>`), or None."""
    parts = urlsplit(url)
    if (parts.hostname or "").lower().removeprefix("www.") != facts.DOMAIN:
        return None
    m = VIDEO_PATH.match(parts.path or "/")
    return PostRef(PLATFORM, m.group("id"), url, kind="video") if m else None


async def oembed_step(ctx: Context, ref: PostRef) -> StepOutcome:
    """Streamable's oEmbed: title, author, thumbnail."""
    return await oembed(ctx, ref, "STREAMABLE_OEMBED_URL")


CHAIN: Chain = (("yt-dlp", ytdlp_step), ("oembed", oembed_step))
