"""Which platform a link is on, and that platform's chain."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from shared.platforms import (
    bluesky,
    facebook,
    imgur,
    instagram,
    reddit,
    streamable,
    telegram,
    tiktok,
    x,
    youtube,
)
from shared.platforms.chain import Chain, PostRef


@dataclass(frozen=True)
class Platform:
    """One platform: its name (the plugin's), how it knows its links, its chain."""

    name: str
    title: str
    """Its name as readers know it ('X', 'TikTok')."""
    recognise: Callable[[str], PostRef | None]
    chain: Chain
    bases: tuple[str, ...]
    """The settings naming its API base URLs (config.json of its plugin)."""


PLATFORMS: dict[str, Platform] = {
    m.PLATFORM: Platform(m.PLATFORM, m.TITLE, m.recognise, m.CHAIN, m.BASES)
    for m in (x, bluesky, tiktok, instagram, youtube, reddit, facebook, imgur, streamable, telegram)
}


def recognise(url: str) -> PostRef | None:
    """The post a link names, on whichever platform it is."""
    for platform in PLATFORMS.values():
        ref = platform.recognise(url)
        if ref is not None:
            return ref
    return None
