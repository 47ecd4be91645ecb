"""``canonicalize``: every form of a link's URL, or why it cannot be archived.

Three forms are kept (seed spec §6):

- ``original``: the string as given;
- ``normalized``: parsed and normalised (see ``urlparts``), tracking parameters removed
  (see ``tracking``), default port dropped, fragment dropped unless it carries state
  (below). The scheme is the one written;
- ``canonical``: site rules applied (see ``sites``), tracking rules re-applied for the new
  host, ``http`` upgraded to ``https`` for the hosts in ``domains.HTTPS_ONLY_DOMAINS``.

Fragments are dropped, except the ones single-page apps keep their state in, because
dropping those loses the content (an ``excalidraw.com/#json=...`` drawing): a fragment
starting with ``!`` or ``/`` (hash routing), or one with ``key=value`` pairs (tracking
pairs removed; ``#:~:text=`` highlights still dropped).

``canonicalize`` never raises and is idempotent on ``.canonical``:
``canonicalize(c.canonical).canonical == c.canonical``.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.links import sites
from shared.links.domains import HTTPS_ONLY_DOMAINS, registrable_domain
from shared.links.tracking import TrackingRules, default_rules
from shared.links.urlparts import MAX_URL_LENGTH, UrlParts, UrlRejected, parse, strip_credentials

_MAX_UNWRAP = 20


@dataclass(frozen=True, slots=True)
class CanonicalUrl:
    """Every form of one URL."""

    original: str
    normalized: str
    canonical: str
    domain: str
    """Host of the canonical URL."""
    needs_resolve: bool
    """A short link (redd.it, /s/ share links, t.co, ...): resolve, then canonicalize again."""


@dataclass(frozen=True, slots=True)
class RejectedUrl:
    """A string that is not an archivable URL."""

    original: str
    reason: str
    """Short code: too-long, empty, relative-url, unsupported-scheme:<s>, no-host, bad-host,
    bad-idn, bad-ipv4, bad-ipv6, bad-port, bad-percent-encoding, bad-unicode,
    not-a-string, internal-error:<exception>."""


def _strip_fragment(p: UrlParts, rules: TrackingRules) -> str | None:
    frag = p.fragment
    if not frag:
        return None
    if frag[0] in "!/":
        return frag
    if "=" not in frag or frag.startswith(":~:"):
        return None
    pairs = []
    for piece in frag.split("&"):
        if piece:
            key, eq, value = piece.partition("=")
            pairs.append((key, value if eq else None))
    kept = rules.strip(p.origin(), p.without_fragment(), pairs)
    if not kept:
        return None
    return "&".join(k if v is None else f"{k}={v}" for k, v in kept)


def _clean(p: UrlParts, rules: TrackingRules) -> UrlParts:
    """Tracking parameters removed from query and fragment; stateless fragment dropped."""
    query = tuple(rules.strip(p.origin(), p.without_fragment(), p.query)) if p.query else ()
    clean = p.replace(query=query) if query != p.query else p
    fragment = _strip_fragment(clean, rules)
    return clean.replace(fragment=fragment) if fragment != p.fragment else clean


def _upgrade(p: UrlParts) -> UrlParts:
    if p.scheme == "http" and p.port is None and registrable_domain(p.host) in HTTPS_ONLY_DOMAINS:
        return p.replace(scheme="https")
    return p


def _canonicalize(url: str, depth: int, rules: TrackingRules) -> CanonicalUrl | RejectedUrl:
    try:
        parsed = parse(url)
    except UrlRejected as exc:
        return RejectedUrl(url, exc.reason)
    normal = _clean(parsed, rules)
    normalized = normal.unsplit()
    if len(normalized) > MAX_URL_LENGTH:
        return RejectedUrl(url, "too-long")
    result = sites.apply(normal)
    if result.redirect is not None and depth < _MAX_UNWRAP:
        inner = _canonicalize(result.redirect, depth + 1, rules)
        if isinstance(inner, CanonicalUrl):
            return CanonicalUrl(url, normalized, inner.canonical, inner.domain, inner.needs_resolve)
    final = _clean(_upgrade(result.parts), rules)
    canonical = final.unsplit()
    if len(canonical) > MAX_URL_LENGTH:
        return RejectedUrl(url, "too-long")
    return CanonicalUrl(url, normalized, canonical, final.host, result.needs_resolve)


def canonicalize(url: str) -> CanonicalUrl | RejectedUrl:
    """All forms of ``url``, or a ``RejectedUrl`` saying why it is not archivable.

    Never raises, whatever the input.
    """
    if not isinstance(url, str):
        return RejectedUrl(repr(url)[:200], "not-a-string")
    url = strip_credentials(url)  # never stored, logged or shown
    try:
        return _canonicalize(url, 0, default_rules())
    except UrlRejected as exc:
        return RejectedUrl(url, exc.reason)
    except Exception as exc:  # the contract is "never raises": report instead
        return RejectedUrl(url, f"internal-error:{type(exc).__name__}")
