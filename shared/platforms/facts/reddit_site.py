"""Reddit: its hosts, canonical form (`https://old.reddit.com`, share and `redd.it` short
links resolved first), its videos (`v.redd.it`) and the wrapper of its page titles."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from shared.platforms.site import MediaRule, Site, SiteResult, redirect, resolve, web, with_slash

if TYPE_CHECKING:
    from shared.links.urlparts import UrlParts

DOMAINS = ("reddit.com", "redd.it")
"""Its registrable domains: a link on one (or below) is Reddit's."""
OLD_HOST = "old.reddit.com"
"""The canonical host: old.reddit's page holds the thread without scripts."""
WWW_HOST = "www.reddit.com"
"""The host that resolves share links and answers the thread's `.json`."""
WEB_HOSTS = frozenset(
    {
        "reddit.com",
        WWW_HOST,
        "m.reddit.com",
        "np.reddit.com",
        "new.reddit.com",
        OLD_HOST,
        "i.reddit.com",
        "amp.reddit.com",
        "sh.reddit.com",
    }
)
OUT_HOST = "out.reddit.com"
SHORT_HOST = "redd.it"
_SHARE = re.compile(r"/r/[^/]+/s/[A-Za-z0-9_]+/?")
_SHORT = re.compile(r"/[A-Za-z0-9]+/?")


def canonical(p: UrlParts) -> SiteResult | None:
    """Reddit's pages -> old.reddit.com (a trailing slash, its own form); a share link stays
    on www.reddit.com to be resolved; `out.reddit.com/?url=` is unwrapped."""
    if p.host == OUT_HOST:
        return redirect(p, p.get("url"))
    if p.host not in WEB_HOSTS:
        return None
    if _SHARE.fullmatch(p.path):
        return SiteResult(
            p.replace(scheme="https", host=WWW_HOST, port=None, fragment=None),
            needs_resolve=True,
        )
    return web(p, OLD_HOST, with_slash(p.path))


def short(p: UrlParts) -> SiteResult | None:
    """`redd.it/<id>`: resolved first."""
    if p.host != SHORT_HOST or not _SHORT.fullmatch(p.path):
        return None
    return resolve(p.replace(path=p.path.rstrip("/")))


SITE = Site(
    name="reddit",
    title="Reddit",
    links=DOMAINS,
    origin=f"https://{OLD_HOST}",
    rules={"reddit.com": canonical, "redd.it": short},
    deletable=DOMAINS,
    https_only=DOMAINS,
    media_key="reddit",
    media_rules=(MediaRule(("v.redd.it",), re.compile(r"^/([\w]+)")),),
    title_wrapper=re.compile(r"^From the \S+ community on Reddit: ", re.I),
    capture_thing="the Reddit thread",
)
