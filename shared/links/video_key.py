"""Which links are videos, and which video: platform + video id across URL variants.

``media_key(url)`` names the video a URL points at, the same for every variant of it
(a platform's short and long forms, ``&t=``, ``m.`` hosts, share links with ``si=`` /
``igsh=`` / ``s=`` parameters, ``player.vimeo.com``...), so the writer
downloads a video once however many links show it. The platform names are yt-dlp's extractor
keys in lower case, the names the media hook reports in its Media records, so a key computed
from a URL before the download meets the key of what was downloaded. Each platform's video
URL forms are its facts' (``shared.platforms.registry``).

A direct media file (``.mp4``, ``.webm``, ``.m3u8``, ``.mp3``, ...) is keyed ``url:`` + its URL
without fragment and time offset (``t``, ``start``): other query parameters stay (a signed
CDN URL's signature names a different file). Pure code, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit

from shared.platforms import registry
from shared.platforms.site import MediaRule

VIDEO_EXTENSIONS = (".mp4", ".webm", ".m3u8", ".m4v", ".mov", ".mkv", ".mpd")
AUDIO_EXTENSIONS = (".mp3", ".m4a", ".aac", ".ogg", ".oga", ".opus", ".wav", ".flac")
MEDIA_EXTENSIONS = VIDEO_EXTENSIONS + AUDIO_EXTENSIONS
"""A URL whose path ends like this is a media file itself (a podcast's episode is one too:
the media hook keeps audio as it keeps video)."""

_TIME_PARAMS = frozenset({"t", "start", "time_continue"})


@dataclass(frozen=True)
class MediaKey:
    """One video: its platform (yt-dlp extractor key, lower case) and its id there."""

    platform: str
    video_id: str

    def __str__(self) -> str:
        return f"{self.platform}:{self.video_id}"


def _host(url: str) -> tuple[str, str, dict[str, str]]:
    """The URL's host (no `www.`/`m.`), path and query; all empty for one that does not
    parse (a page's `http://[::1/x.mp4`: urlsplit raises on a broken IPv6 literal)."""
    try:
        parts = urlsplit(url.strip())
        hostname = parts.hostname
    except ValueError:
        return "", "", {}
    host = (hostname or "").lower().removeprefix("www.").removeprefix("m.")
    return host, parts.path or "/", dict(parse_qsl(parts.query))


def _on(host: str, *domains: str) -> bool:
    return any(host == d or host.endswith("." + d) for d in domains)


VIMEO = MediaRule(
    ("vimeo.com",),
    re.compile(r"^/(?:video/|channels/[^/]+/|groups/[^/]+/videos/)?(\d+)"),
)
"""Vimeo's video URLs (a video site, not a platform whose posts are kept)."""
RULES: tuple[tuple[str, MediaRule], ...] = (*registry.MEDIA_RULES, ("vimeo", VIMEO))
"""(platform, rule), the platforms' first (``shared.platforms.registry``)."""
KEYED_PLATFORMS = frozenset(platform for platform, _ in RULES)
"""The platforms whose videos a URL names (their media keys' platforms)."""


def _video_id(rule: MediaRule, path: str, query: dict[str, str]) -> str | None:
    if rule.query is not None:
        value = query.get(rule.query, "")
        matched = rule.path.fullmatch(path) and rule.value and rule.value.fullmatch(value)
        return value if matched else None
    m = rule.path.match(path)
    if m is None:
        return None
    return m.group("id") if "id" in rule.path.groupindex else m.group(1)


def _platform_key(host: str, path: str, query: dict[str, str]) -> MediaKey | None:
    for platform, rule in RULES:
        if _on(host, *rule.domains):
            video = _video_id(rule, path, query)
            if video is not None:
                return MediaKey(platform, video)
    return None


def is_media_file(url: str) -> bool:
    """True when the URL's path names a media file (.mp4, .webm, .m3u8, ...)."""
    _, path, _ = _host(url)
    return path.lower().endswith(MEDIA_EXTENSIONS)


def media_key(url: str) -> MediaKey | None:
    """The video a URL points at, the same for every variant of it; None if not known."""
    host, path, query = _host(url)
    if not host:
        return None
    key = _platform_key(host, path, query)
    if key is not None:
        return key
    if is_media_file(url):
        parts = urlsplit(url.strip())
        kept = [(k, v) for k, v in parse_qsl(parts.query) if k not in _TIME_PARAMS]
        tail = "?" + urlencode(kept) if kept else ""
        return MediaKey("url", f"{parts.scheme}://{parts.netloc.lower()}{parts.path}{tail}")
    return None


def names_post(url: str) -> bool:
    """True when the URL names a platform post that may or may not hold a video (an X or
    Bluesky post, an Instagram `/p/` post): whether it needs the media service is known only
    once its capture has read the post."""
    key = media_key(url)
    site = registry.by_media_key(key.platform) if key is not None else None
    return (
        site is not None and site.post_may_hold_video is not None and site.post_may_hold_video(url)
    )


def is_video_link(url: str) -> bool:
    """True when a link gets a media job from its URL alone: a video on a platform the
    media service downloads from, or a media file."""
    return media_key(url) is not None
