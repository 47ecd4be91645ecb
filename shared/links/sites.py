"""Site rules: small table-driven rewrites from a normalised URL to its canonical form.

Each rule takes ``UrlParts`` (already normalised, tracking parameters stripped) and
returns ``None`` (not mine) or a ``SiteResult``: the rewritten parts, whether the URL is a
short link a worker must resolve first (``needs_resolve``), or a ``redirect`` target to
canonicalise instead (unwrapping of Google AMP / redirect links). Rules must be
idempotent: applied to their own output they return it unchanged.

Rules are looked up by registrable domain (``RULES``). Summary:

- Reddit: ``reddit.com``, ``www.``, ``m.``, ``np.``, ``new.``, ``i.``, ``amp.``, ``sh.`` ->
  ``https://old.reddit.com`` keeping the permalink path; reddit paths get a trailing
  slash (old.reddit's own form). Share links ``/r/<sub>/s/<id>`` stay on www.reddit.com
  (only it resolves them) with ``needs_resolve``; ``redd.it/<id>`` gets ``needs_resolve``;
  ``out.reddit.com/?url=`` is unwrapped.
- YouTube: ``youtu.be/<id>``, ``/shorts/<id>``, ``/embed/<id>``, ``/live/<id>``, ``/v/<id>``,
  ``m.youtube.com``, ``youtube-nocookie.com`` -> ``https://www.youtube.com/watch?v=<id>``
  keeping the start time as ``t`` (from ``t``, ``start``, ``time_continue`` or ``#t=``);
  other watch parameters (``list``, ``index``, ...) are dropped.
- X: ``twitter.com``, ``www.``/``mobile.``/``m.`` of twitter.com and x.com, and the
  embed fixers (fxtwitter, vxtwitter, fixupx, fixvx) -> ``https://x.com``.
- Instagram, TikTok, Facebook: one web host each (``www.``); their short links
  (``vm.tiktok.com``, ``/t/<id>``, ``fb.watch``) get ``needs_resolve``.
- Generic URL shorteners (``SHORTENERS``): ``needs_resolve``.
- Google ``/amp/s/<url>``, ``/url?q=<url>`` and AMP-cache ``/c/s/<url>`` links are
  unwrapped to the target.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote

from shared.links.domains import registrable_domain
from shared.links.urlparts import SCHEME_PREFIXES, UrlParts


@dataclass(frozen=True, slots=True)
class SiteResult:
    """What a site rule decided."""

    parts: UrlParts
    needs_resolve: bool = False
    redirect: str | None = None


SiteRule = Callable[[UrlParts], SiteResult | None]


def _web(p: UrlParts, host: str, path: str | None = None) -> SiteResult:
    return SiteResult(
        p.replace(scheme="https", host=host, port=None, fragment=None, path=path or p.path)
    )


def _resolve(p: UrlParts) -> SiteResult:
    return SiteResult(p.replace(scheme="https", port=None, fragment=None), needs_resolve=True)


def _redirect(p: UrlParts, target: str | None) -> SiteResult | None:
    if target is None:
        return None
    target = unquote(target)
    if not target.lower().startswith(SCHEME_PREFIXES):
        return None
    return SiteResult(p, redirect=target)


def _with_slash(path: str) -> str:
    last = path.rsplit("/", 1)[-1]
    return path if path.endswith("/") or "." in last else path + "/"


# --- Reddit ------------------------------------------------------------------------------

REDDIT_WEB_HOSTS = frozenset(
    {
        "reddit.com",
        "www.reddit.com",
        "m.reddit.com",
        "np.reddit.com",
        "new.reddit.com",
        "old.reddit.com",
        "i.reddit.com",
        "amp.reddit.com",
        "sh.reddit.com",
    }
)
_REDDIT_SHARE = re.compile(r"/r/[^/]+/s/[A-Za-z0-9_]+/?")
_REDDIT_SHORT = re.compile(r"/[A-Za-z0-9]+/?")


def reddit(p: UrlParts) -> SiteResult | None:
    if p.host == "out.reddit.com":
        return _redirect(p, p.get("url"))
    if p.host not in REDDIT_WEB_HOSTS:
        return None
    if _REDDIT_SHARE.fullmatch(p.path):
        return SiteResult(
            p.replace(scheme="https", host="www.reddit.com", port=None, fragment=None),
            needs_resolve=True,
        )
    return _web(p, "old.reddit.com", _with_slash(p.path))


def redd_it(p: UrlParts) -> SiteResult | None:
    if p.host != "redd.it" or not _REDDIT_SHORT.fullmatch(p.path):
        return None
    return _resolve(p.replace(path=p.path.rstrip("/")))


# --- YouTube -----------------------------------------------------------------------------

YOUTUBE_HOSTS = frozenset(
    {
        "youtube.com",
        "www.youtube.com",
        "m.youtube.com",
        "youtube-nocookie.com",
        "www.youtube-nocookie.com",
    }
)
_YT_ID = re.compile(r"[A-Za-z0-9_-]{11}")
_YT_PATH_ID = re.compile(r"/(?:shorts|embed|live|v|e)/([A-Za-z0-9_-]{11})/?")
_YT_SHORT = re.compile(r"/([A-Za-z0-9_-]{11})/?")
_FRAGMENT_T = re.compile(r"(?:^|&)t=([^&]+)")


def _youtube_start(p: UrlParts) -> str | None:
    for name in ("t", "start", "time_continue"):
        value = p.get(name)
        if value:
            return value
    if p.fragment:
        m = _FRAGMENT_T.search(p.fragment)
        if m:
            return m.group(1)
    return None


def youtube(p: UrlParts) -> SiteResult | None:
    video: str | None = None
    if p.host in ("youtu.be", "www.youtu.be"):
        m = _YT_SHORT.fullmatch(p.path)
        video = m.group(1) if m else None
    elif p.host in YOUTUBE_HOSTS:
        if p.path == "/redirect":
            return _redirect(p, p.get("q"))
        if p.path in ("/watch", "/watch/"):
            v = p.get("v")
            video = v if v and _YT_ID.fullmatch(v) else None
        else:
            m = _YT_PATH_ID.fullmatch(p.path)
            video = m.group(1) if m else None
        if video is None:
            return _web(p, "www.youtube.com")
    else:
        return None
    if video is None:
        return None
    start = _youtube_start(p)
    query: tuple[tuple[str, str | None], ...] = (("v", video),)
    if start:
        query += (("t", start),)
    return SiteResult(UrlParts("https", "", "www.youtube.com", None, "/watch", query, None))


# --- X / Twitter -------------------------------------------------------------------------

X_HOSTS = frozenset(
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


def twitter(p: UrlParts) -> SiteResult | None:
    return _web(p, "x.com") if p.host in X_HOSTS else None


# --- Instagram, TikTok, Facebook ---------------------------------------------------------

INSTAGRAM_HOSTS = frozenset(
    {"instagram.com", "www.instagram.com", "m.instagram.com", "instagr.am", "www.instagr.am"}
)
_IG_POST = re.compile(r"(?:/[^/]+)?/(?:p|reel|reels|tv)/[A-Za-z0-9_-]+")


def instagram(p: UrlParts) -> SiteResult | None:
    if p.host not in INSTAGRAM_HOSTS:
        return None
    path = _with_slash(p.path) if _IG_POST.fullmatch(p.path) else p.path
    return _web(p, "www.instagram.com", path)


TIKTOK_WEB_HOSTS = frozenset({"tiktok.com", "www.tiktok.com", "m.tiktok.com"})
TIKTOK_SHORT_HOSTS = frozenset({"vm.tiktok.com", "vt.tiktok.com"})
_TIKTOK_T = re.compile(r"/t/[A-Za-z0-9]+/?")


def tiktok(p: UrlParts) -> SiteResult | None:
    if p.host in TIKTOK_SHORT_HOSTS and p.path != "/":
        return _resolve(p)
    if p.host not in TIKTOK_WEB_HOSTS:
        return None
    if _TIKTOK_T.fullmatch(p.path):
        return _resolve(p.replace(host="www.tiktok.com"))
    return _web(p, "www.tiktok.com")


FACEBOOK_WEB_HOSTS = frozenset(
    {
        "facebook.com",
        "www.facebook.com",
        "m.facebook.com",
        "mobile.facebook.com",
        "web.facebook.com",
        "touch.facebook.com",
        "mbasic.facebook.com",
    }
)


def facebook(p: UrlParts) -> SiteResult | None:
    if p.host in ("l.facebook.com", "lm.facebook.com") and p.path == "/l.php":
        return _redirect(p, p.get("u"))
    if p.host in FACEBOOK_WEB_HOSTS:
        return _web(p, "www.facebook.com")
    return None


def fb_watch(p: UrlParts) -> SiteResult | None:
    return _resolve(p) if p.path != "/" else None


# --- Shorteners, Google / AMP unwrapping -------------------------------------------------

SHORTENERS = frozenset(
    {
        "bit.ly",
        "bitly.com",
        "tinyurl.com",
        "t.co",
        "ow.ly",
        "buff.ly",
        "goo.gl",
        "is.gd",
        "v.gd",
        "lnkd.in",
        "dlvr.it",
        "rebrand.ly",
        "cutt.ly",
        "shorturl.at",
        "t.ly",
        "tiny.cc",
        "trib.al",
        "amzn.to",
        "fb.me",
        "wp.me",
    }
)


def shortener(p: UrlParts) -> SiteResult | None:
    return SiteResult(p.replace(fragment=None), needs_resolve=True) if p.path != "/" else None


def _amp_target(rest: str, secure: bool, p: UrlParts) -> str:
    target = ("https://" if secure else "http://") + rest
    if p.query:
        target += "?" + p.query_string()
    return target


def google(p: UrlParts) -> SiteResult | None:
    if p.path.startswith("/amp/s/") and len(p.path) > 7:
        return SiteResult(p, redirect=_amp_target(p.path[7:], True, p))
    if p.path.startswith("/amp/") and len(p.path) > 5:
        return SiteResult(p, redirect=_amp_target(p.path[5:], False, p))
    if p.path == "/url":
        return _redirect(p, p.get("q") or p.get("url"))
    return None


_AMP_CACHE = re.compile(r"/[cvi]/(s/)?([^/]+\.[^/]+/?.*)")


def ampproject(p: UrlParts) -> SiteResult | None:
    m = _AMP_CACHE.fullmatch(p.path)
    if not m:
        return None
    return SiteResult(p, redirect=_amp_target(m.group(2), bool(m.group(1)), p))


RULES: dict[str, SiteRule] = {
    "reddit.com": reddit,
    "redd.it": redd_it,
    "youtube.com": youtube,
    "youtu.be": youtube,
    "youtube-nocookie.com": youtube,
    "x.com": twitter,
    "twitter.com": twitter,
    "fxtwitter.com": twitter,
    "vxtwitter.com": twitter,
    "fixupx.com": twitter,
    "fixvx.com": twitter,
    "instagram.com": instagram,
    "instagr.am": instagram,
    "tiktok.com": tiktok,
    "facebook.com": facebook,
    "fb.watch": fb_watch,
    "ampproject.org": ampproject,
    **{domain: shortener for domain in SHORTENERS},
}


def rule_for(host: str) -> SiteRule | None:
    """The site rule responsible for ``host``, if any."""
    reg = registrable_domain(host)
    rule = RULES.get(reg)
    if rule is None and reg.startswith("google."):
        return google
    return rule


def apply(p: UrlParts) -> SiteResult:
    """Apply the site rule of ``p``'s host (identity when there is none)."""
    rule = rule_for(p.host)
    result = rule(p) if rule is not None else None
    return result if result is not None else SiteResult(p)
