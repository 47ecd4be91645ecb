"""TikTok: its hosts, canonical form (`https://www.tiktok.com`, short links resolved first),
post and video URLs, walls and titles."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from shared.platforms.site import InfoFields, MediaRule, PostTitle, Site, SiteResult, resolve, web

if TYPE_CHECKING:
    from shared.links.urlparts import UrlParts

HOST = "www.tiktok.com"
WEB_HOSTS = frozenset({"tiktok.com", HOST, "m.tiktok.com"})
"""Hosts whose post URLs name a post (the short hosts' links are resolved first)."""
SHORT_HOSTS = frozenset({"vm.tiktok.com", "vt.tiktok.com"})
POST_PATH = re.compile(r"^/@(?P<handle>[\w.-]{1,64})/(?P<kind>video|photo)/(?P<id>\d{5,25})")
EMBED_PATH = re.compile(r"^/(?:embed(?:/v2)?|v)/(?P<id>\d{5,25})")
_T = re.compile(r"/t/[A-Za-z0-9]+/?")


def canonical(p: UrlParts) -> SiteResult | None:
    """One web host; `vm.`/`vt.` and `/t/<id>` short links resolved first."""
    if p.host in SHORT_HOSTS and p.path != "/":
        return resolve(p)
    if p.host not in WEB_HOSTS:
        return None
    if _T.fullmatch(p.path):
        return resolve(p.replace(host=HOST))
    return web(p, HOST)


SITE = Site(
    name="tiktok",
    title="TikTok",
    links=("tiktok.com",),
    rules={"tiktok.com": canonical},
    deletable=("tiktok.com",),
    https_only=("tiktok.com",),
    media_key="tiktok",
    ytdlp=InfoFields(
        "tiktok",
        name=("channel", "creator"),  # `uploader` is the handle
        handle=("uploader",),
        id=("uploader_id",),
        url=("uploader_url",),
        titled=False,
    ),
    media_rules=(
        MediaRule(("tiktok.com",), re.compile(r"^/@[^/]+/(?:video|photo)/(\d+)")),
        MediaRule(("tiktok.com",), re.compile(r"^/(?:embed(?:/v2)?|v)/(\d+)")),
    ),
    walls={"tiktok.com": re.compile(r"log in to tiktok|log in to follow creators", re.I)},
    author_in_title={"tiktok.com": re.compile(r"^(?P<name>.+?)(?: \(@[^)]+\))? on TikTok\b")},
    post_titles={
        "tiktok.com": PostTitle(
            re.compile(r"^(?P<name>.+?)(?: \(@[\w.]+\))? on TikTok(?:: .*)?$", re.S),
            re.compile(r"^/@(?P<handle>[\w.]{1,32})/(?:video|photo)/\d+"),
        )
    },
)
