"""Site rules: small table-driven rewrites from a normalised URL to its canonical form.

Each rule takes ``UrlParts`` (already normalised, tracking parameters stripped) and
returns ``None`` (not mine) or a ``SiteResult``: the rewritten parts, whether the URL is a
short link a worker must resolve first (``needs_resolve``), or a ``redirect`` target to
canonicalise instead (unwrapping of Google AMP / redirect links). Rules must be
idempotent: applied to their own output they return it unchanged.

Rules are looked up by registrable domain (``RULES``):

- each platform's own (its canonical form, its short links), declared with its facts in
  ``shared/platforms/facts/<platform>_site.py`` and read through ``shared.platforms.registry``
  (Reddit to old.reddit.com, YouTube's short forms to the watch URL, twitter.com to x.com,
  ...);
- generic URL shorteners (``SHORTENERS``, and the platforms' own): ``needs_resolve``;
- Google ``/amp/s/<url>``, ``/url?q=<url>`` and AMP-cache ``/c/s/<url>`` links are
  unwrapped to the target.
"""

from __future__ import annotations

import re

from shared.links.domains import registrable_domain
from shared.links.urlparts import UrlParts
from shared.platforms import registry
from shared.platforms.site import SiteResult, SiteRule, redirect

__all__ = ["RULES", "SiteResult", "SiteRule", "apply", "rule_for"]


# --- Shorteners, Google / AMP unwrapping -------------------------------------------------

SHORTENERS = frozenset(
    {
        "bit.ly",
        "bitly.com",
        "tinyurl.com",
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
        return redirect(p, p.get("q") or p.get("url"))
    return None


_AMP_CACHE = re.compile(r"/[cvi]/(s/)?([^/]+\.[^/]+/?.*)")


def ampproject(p: UrlParts) -> SiteResult | None:
    m = _AMP_CACHE.fullmatch(p.path)
    if not m:
        return None
    return SiteResult(p, redirect=_amp_target(m.group(2), bool(m.group(1)), p))


RULES: dict[str, SiteRule] = {
    **registry.SITE_RULES,
    "ampproject.org": ampproject,
    **{domain: shortener for domain in (*SHORTENERS, *registry.SHORTENERS)},
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
