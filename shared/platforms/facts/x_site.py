"""X (Twitter): its hosts, canonical form (`https://x.com`), status URLs, walls, titles."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from shared.platforms.site import InfoFields, MediaRule, PostTitle, Site, SiteResult, web

if TYPE_CHECKING:
    from shared.links.urlparts import UrlParts

POST_HOSTS = ("x.com", "twitter.com", "mobile.twitter.com", "mobile.x.com")
"""Hosts (without `www.`) whose status URLs name a post."""
WEB_HOSTS = frozenset(
    {
        "x.com",
        "www.x.com",
        "mobile.x.com",
        "m.x.com",
        "twitter.com",
        "www.twitter.com",
        "mobile.twitter.com",
        "m.twitter.com",
        "fxtwitter.com",
        "www.fxtwitter.com",
        "vxtwitter.com",
        "www.vxtwitter.com",
        "fixupx.com",
        "fixvx.com",
    }
)
"""Hosts whose links are X's pages: its own, its mobile hosts and the embed fixers."""
STATUS_PATH = re.compile(r"^/(?:(?P<handle>\w{1,15})|i(?:/web)?)/status(?:es)?/(?P<id>\d{1,25})")
WALL = re.compile(
    r"don.t miss what.s happening|people on x are the first to know|"
    r"log in to x\b|sign in to x\b|this page is not supported|"
    r"something went wrong\. try reloading",
    re.I,
)
POST_TITLE = PostTitle(
    re.compile(r"^(?P<name>.+?)(?: \(@\w{1,15}\))? on (?:X|Twitter)(?:: .*)?$", re.S),
    re.compile(r"^/(?P<handle>\w{1,15})/status(?:es)?/\d+"),
    re.compile(r"^(?P<name>.+?) \((?P<handle>@\w{1,15})\) / (?:X|Twitter)$"),
)


def canonical(p: UrlParts) -> SiteResult | None:
    """Every X host -> `https://x.com`."""
    return web(p, "x.com") if p.host in WEB_HOSTS else None


SITE = Site(
    name="x",
    title="X",
    links=("x.com", "twitter.com"),
    rules=dict.fromkeys(
        ("x.com", "twitter.com", "fxtwitter.com", "vxtwitter.com", "fixupx.com", "fixvx.com"),
        canonical,
    ),
    deletable=("x.com", "twitter.com"),
    https_only=("x.com", "twitter.com", "t.co"),
    shorteners=("t.co",),
    media_key="twitter",
    ytdlp=InfoFields(
        "twitter",
        name=("uploader",),
        handle=("uploader_id",),
        id=("channel_id",),
        url=("uploader_url",),
        titled=False,
    ),
    media_rules=(MediaRule(("x.com", "twitter.com"), STATUS_PATH),),
    post_may_hold_video=lambda url: True,
    walls={"x.com": WALL, "twitter.com": WALL},
    author_in_title={
        "x.com": re.compile(r"^(?P<name>.+?)(?: \(@[^)]+\))?(?: on X\b| / X$)"),
        "twitter.com": re.compile(
            r"^(?P<name>.+?)(?: \(@[^)]+\))?(?: on (?:X|Twitter)\b| / (?:X|Twitter)$)"
        ),
    },
    post_titles={"x.com": POST_TITLE, "twitter.com": POST_TITLE},
)
