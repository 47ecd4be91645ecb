"""Which platform's chain a link's post is got with: each platform's facts
(`shared.platforms.registry`) paired with its chain module (`shared/platforms/<platform>.py`)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from urllib.parse import urlsplit

from shared.platforms import (
    bluesky,
    facebook,
    imgur,
    instagram,
    mastodon,
    reddit,
    streamable,
    telegram,
    tiktok,
    x,
    youtube,
)
from shared.platforms.chain import Chain, PostRef
from shared.platforms.registry import SITES


@dataclass(frozen=True)
class Platform:
    """One platform: its name (the plugin's), how it knows its links, its chain."""

    name: str
    title: str
    """Its name as readers know it ('X', 'TikTok')."""
    recognise: Callable[[str], PostRef | None]
    """The post a link names by its URL's shape (for a platform on any host, on any host:
    `recognise` below also asks whether the host is one of its instances)."""
    chain: Chain
    bases: tuple[str, ...]
    """The settings naming its API base URLs (config.json of its plugin)."""


_MODULES = (
    x,
    bluesky,
    tiktok,
    instagram,
    youtube,
    reddit,
    facebook,
    imgur,
    streamable,
    telegram,
    mastodon,
)
PLATFORMS: dict[str, Platform] = {
    m.PLATFORM: Platform(m.PLATFORM, SITES[m.PLATFORM].title, m.recognise, m.CHAIN, m.BASES)
    for m in _MODULES
}


def recognise(url: str, instances: Collection[str] = ()) -> PostRef | None:
    """The post a link names, on whichever platform it is; `instances`: the hosts of the
    platforms on any host (Mastodon's `MASTODON_INSTANCES`) a link may be on."""
    host = (urlsplit(url).hostname or "").lower()
    for platform in PLATFORMS.values():
        if SITES[platform.name].instances is not None and host not in instances:
            continue
        ref = platform.recognise(url)
        if ref is not None:
            return ref
    return None
