"""Instagram: its hosts, canonical form (`https://www.instagram.com`, a post's path with a
trailing slash), post URLs, walls and titles."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from shared.platforms.site import InfoFields, MediaRule, Site, SiteResult, web, with_slash

if TYPE_CHECKING:
    from shared.links.urlparts import UrlParts

HOST = "www.instagram.com"
WEB_HOSTS = frozenset({"instagram.com", HOST, "m.instagram.com", "instagr.am", "www.instagr.am"})
POST_HOSTS = ("instagram.com", HOST, "m.instagram.com")
"""Hosts whose post URLs name a post."""
POST_PATH = re.compile(
    r"^/(?:(?P<handle>[\w.]{1,30})/)?(?P<kind>p|reels?|tv)/(?P<code>[\w-]{5,60})"
)
_POST = re.compile(r"(?:/[^/]+)?/(?:p|reel|reels|tv)/[A-Za-z0-9_-]+")


def canonical(p: UrlParts) -> SiteResult | None:
    """One web host; a post's path ends with a slash."""
    if p.host not in WEB_HOSTS:
        return None
    path = with_slash(p.path) if _POST.fullmatch(p.path) else p.path
    return web(p, HOST, path)


SITE = Site(
    name="instagram",
    title="Instagram",
    links=("instagram.com",),
    rules={"instagram.com": canonical, "instagr.am": canonical},
    deletable=("instagram.com",),
    https_only=("instagram.com", "instagr.am"),
    media_key="instagram",
    ytdlp=InfoFields(
        "instagram",
        name=("uploader",),  # the full name; `channel` is the user name
        handle=("channel",),
        id=("uploader_id",),
        url=(),
        profile=f"https://{HOST}/{{}}/",
        titled=False,
    ),
    media_rules=(
        MediaRule(("instagram.com",), re.compile(r"^/(?:[^/]+/)?(?:p|reel|reels|tv)/([\w-]+)")),
    ),
    post_may_hold_video=lambda url: "/p/" in urlsplit(url.strip()).path,
    walls={
        "instagram.com": re.compile(
            r"log into instagram|sign up for instagram|log in to see photos and videos|"
            r"see everyday moments from your close friends",
            re.I,
        )
    },
    author_in_title={
        "instagram.com": re.compile(
            r"^(?P<name>.+?)(?: \(@[^)]+\))?(?: on Instagram\b| • Instagram)"
        )
    },
)
