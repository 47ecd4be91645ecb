"""Facebook: its hosts, canonical form (`https://www.facebook.com`, `fb.watch` resolved
first, `l.facebook.com/l.php` unwrapped), video URLs and walls."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from shared.platforms.site import InfoFields, MediaRule, Site, SiteResult, redirect, resolve, web

if TYPE_CHECKING:
    from shared.links.urlparts import UrlParts

HOST = "www.facebook.com"
WEB_HOSTS = frozenset(
    {
        "facebook.com",
        HOST,
        "m.facebook.com",
        "mobile.facebook.com",
        "web.facebook.com",
        "touch.facebook.com",
        "mbasic.facebook.com",
    }
)
"""Hosts whose links are Facebook's pages."""
POST_HOSTS = ("facebook.com", HOST, "m.facebook.com", "web.facebook.com")
"""Hosts whose post URLs name a post."""
WATCH_HOST = "fb.watch"
LINK_HOSTS = ("l.facebook.com", "lm.facebook.com")
"""Its redirect hosts (`/l.php?u=<target>`)."""


def canonical(p: UrlParts) -> SiteResult | None:
    """One web host; its redirect links unwrapped."""
    if p.host in LINK_HOSTS and p.path == "/l.php":
        return redirect(p, p.get("u"))
    if p.host in WEB_HOSTS:
        return web(p, HOST)
    return None


def watch(p: UrlParts) -> SiteResult | None:
    """`fb.watch/<id>`: resolved first."""
    return resolve(p) if p.path != "/" else None


WALL = re.compile(
    r"you must log in to continue|log into facebook|log in to facebook|"
    r"see more on facebook|you.re temporarily blocked",
    re.I,
)
SITE = Site(
    name="facebook",
    title="Facebook",
    links=("facebook.com", WATCH_HOST),
    rules={"facebook.com": canonical, WATCH_HOST: watch},
    deletable=("facebook.com", WATCH_HOST),
    https_only=("facebook.com", WATCH_HOST, "fb.com"),
    shorteners=("fb.me",),
    media_key="facebook",
    ytdlp=InfoFields("facebook"),
    media_rules=(
        MediaRule(("facebook.com",), re.compile(r"/watch/?"), "v", re.compile(r"\d+")),
        MediaRule(("facebook.com",), re.compile(r"^/(?:[^/]+/)?videos/(?:[^/]+/)?(\d+)")),
        MediaRule(("facebook.com",), re.compile(r"^/reel/(\d+)")),
        MediaRule((WATCH_HOST,), re.compile(r"^/([\w-]+)")),
    ),
    walls={"facebook.com": WALL, WATCH_HOST: WALL},
)
