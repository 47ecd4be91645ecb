"""Which platform's chain a link's post is got with: each platform of the registry
(`shared.platforms.registry`) paired with its chain module (`shared/platforms/<platform>.py`:
`recognise`, `CHAIN`, `BASES`; optionally `capture_ref`, `error_code` and
`CAPTURE_COOKIES`, which Reddit's declares)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection
from dataclasses import dataclass
from urllib.parse import urlsplit

from shared.platforms.chain import Chain, PostRef
from shared.platforms.outcome import ChainResult
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
    capture_ref: Callable[[str], PostRef | None]
    """What its plugin's capture of a link starts from: `recognise`, or for a platform whose
    other pages are kept too (Reddit's subreddits), a PostRef naming no post for those."""
    error_code: Callable[[ChainResult], str] | None = None
    """The code of a capture that kept nothing, when the platform ranks its steps' answers
    itself (Reddit: a block page anywhere first); None: the deciding step's."""
    capture_cookies: bool = True
    """Whether its capture sends the operator's cookies (COOKIES_DIR); its liveness checks
    always may."""


def _paired(name: str) -> Platform:
    """A platform's facts with its chain module, `shared/platforms/<name>.py`."""
    module = importlib.import_module(f"shared.platforms.{name}")
    return Platform(
        name,
        SITES[name].title,
        module.recognise,
        module.CHAIN,
        module.BASES,
        getattr(module, "capture_ref", module.recognise),
        getattr(module, "error_code", None),
        getattr(module, "CAPTURE_COOKIES", True),
    )


PLATFORMS: dict[str, Platform] = {name: _paired(name) for name in SITES}
"""Every platform with its chain, in the registry's order."""


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
