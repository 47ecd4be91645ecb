"""Which links are videos, and which video: platform + video id across URL variants.

``media_key(url)`` names the video a URL points at, the same for every variant of it
(``youtu.be/<id>``, ``/shorts/<id>``, ``&t=``, ``m.`` hosts, share links with ``si=`` /
``igsh=`` / ``s=`` parameters, ``player.vimeo.com``, ``v.redd.it``...), so the writer
downloads a video once however many links show it. The platform names are yt-dlp's extractor
keys in lower case, the names the media hook reports in its Media records, so a key computed
from a URL before the download meets the key of what was downloaded.

A direct media file (``.mp4``, ``.webm``, ``.m3u8``, ...) is keyed ``url:`` + its URL
without fragment and time offset (``t``, ``start``): other query parameters stay (a signed
CDN URL's signature names a different file). Pure code, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit

MEDIA_EXTENSIONS = (".mp4", ".webm", ".m3u8", ".m4v", ".mov", ".mkv", ".mpd")
"""A URL whose path ends like this is a media file itself."""

_TIME_PARAMS = frozenset({"t", "start", "time_continue"})


@dataclass(frozen=True)
class MediaKey:
    """One video: its platform (yt-dlp extractor key, lower case) and its id there."""

    platform: str
    video_id: str

    def __str__(self) -> str:
        return f"{self.platform}:{self.video_id}"


def _host(url: str) -> tuple[str, str, dict[str, str]]:
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower().removeprefix("www.").removeprefix("m.")
    return host, parts.path or "/", dict(parse_qsl(parts.query))


def _on(host: str, *domains: str) -> bool:
    return any(host == d or host.endswith("." + d) for d in domains)


_YT_ID = r"([A-Za-z0-9_-]{11})"
_RULES: tuple[tuple[tuple[str, ...], str, re.Pattern[str]], ...] = (
    (("youtu.be",), "youtube", re.compile(rf"^/{_YT_ID}(?:/|$)")),
    (
        ("youtube.com", "youtube-nocookie.com"),
        "youtube",
        re.compile(rf"^/(?:shorts|embed|live|v|e)/{_YT_ID}(?:/|$)"),
    ),
    (("tiktok.com",), "tiktok", re.compile(r"^/@[^/]+/(?:video|photo)/(\d+)")),
    (("tiktok.com",), "tiktok", re.compile(r"^/(?:embed(?:/v2)?|v)/(\d+)")),
    (("x.com", "twitter.com"), "twitter", re.compile(r"^/(?:[^/]+|i/web)/status(?:es)?/(\d+)")),
    (("instagram.com",), "instagram", re.compile(r"^/(?:[^/]+/)?(?:p|reel|reels|tv)/([\w-]+)")),
    (("facebook.com",), "facebook", re.compile(r"^/(?:[^/]+/)?videos/(?:[^/]+/)?(\d+)")),
    (("facebook.com",), "facebook", re.compile(r"^/reel/(\d+)")),
    (("fb.watch",), "facebook", re.compile(r"^/([\w-]+)")),
    (("bsky.app",), "bluesky", re.compile(r"^/profile/[^/]+/post/([\w]+)")),
    (("v.redd.it",), "reddit", re.compile(r"^/([\w]+)")),
    (("streamable.com",), "streamable", re.compile(r"^/(?:[eso]/)?([\w]+)/?$")),
    (
        ("vimeo.com",),
        "vimeo",
        re.compile(r"^/(?:video/|channels/[^/]+/|groups/[^/]+/videos/)?(\d+)"),
    ),
)


def _platform_key(host: str, path: str, query: dict[str, str]) -> MediaKey | None:
    if _on(host, "youtube.com", "youtube-nocookie.com") and path == "/watch":
        vid = query.get("v", "")
        return MediaKey("youtube", vid) if re.fullmatch(_YT_ID, vid) else None
    if _on(host, "facebook.com") and path in ("/watch", "/watch/") and query.get("v", "").isdigit():
        return MediaKey("facebook", query["v"])
    for domains, platform, pattern in _RULES:
        if _on(host, *domains):
            m = pattern.match(path)
            if m:
                return MediaKey(platform, m.group(1))
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
    if key is None:
        return False
    if key.platform == "instagram":
        return "/p/" in _host(url)[1]
    return key.platform in ("twitter", "bluesky")


def is_video_link(url: str) -> bool:
    """True when a link gets a media job from its URL alone: a video on a platform the
    media service downloads from, or a media file."""
    return media_key(url) is not None
