"""Whether a page shows a video: the hint that gives its link a media job.

A page shows a video when it has an ``og:video`` (or ``twitter:player:stream``) meta tag, a
``<video>`` or ``<audio>`` element (the media hook keeps a podcast's episode as it keeps a
video), an embedded player of a known video platform (``<iframe>`` whose URL names a video,
``shared.links.video_key``), or a link to a media file (``.mp4``, ``.m3u8``, ``.mp3``, ...).
yt-dlp finds the first three on the page itself, not the last: ``media_links`` gives the
media hook those files to download.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urljoin

from lxml.html import HtmlElement

from shared.content.metadata import parse_document
from shared.links.urlparts import supported_scheme
from shared.links.video_key import is_media_file, media_key

VIDEO_META = ("og:video", "og:video:url", "og:video:secure_url", "twitter:player:stream")


def shows_video(html: str) -> bool:
    """True when the page shows a video (see the module docstring)."""
    root = parse_document(html)
    if root is None:
        return False
    for meta in root.iter("meta"):
        key = (meta.get("property") or meta.get("name") or "").strip().lower()
        if key in VIDEO_META and (meta.get("content") or "").strip():
            return True
    if next(root.iter("video", "audio"), None) is not None:
        return True
    for frame in root.iter("iframe"):
        if media_key(frame.get("src") or "") is not None:
            return True
    return next(_media_hrefs(root), None) is not None


def media_links(html: str, base: str) -> list[str]:
    """The media files the page links to (``<a href>`` naming a ``.mp4``, ``.m3u8``, ...),
    as absolute http(s) URLs resolved against `base` (the page's final URL), in page order,
    each once."""
    root = parse_document(html)
    if root is None:
        return []
    found: dict[str, None] = {}
    for href in _media_hrefs(root):
        url = urljoin(base, href)
        if supported_scheme(url):
            found.setdefault(url.split("#", 1)[0])
    return list(found)


def _media_hrefs(root: HtmlElement) -> Iterator[str]:
    for a in root.iter("a"):
        href = (a.get("href") or "").strip()
        if href and is_media_file(href):
            yield href
