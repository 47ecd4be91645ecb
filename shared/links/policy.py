"""Domain policy (seed spec §3.3) and the one-call pipeline ``occurrences_for_post``.

``DomainPolicy.decide`` on a ``CanonicalUrl``, first rule that applies wins:

1. scheme not http(s) -> ``skip``, ``scheme:<s>`` (canonicalize never produces one;
   defensive);
2. host equal to or under an ``exclude`` entry -> ``skip``, ``excluded:<entry>``
   (exclusion wins over the allowlist);
3. mode ``all`` -> ``archive``, ``mode:all``;
4. host equal to or under an ``allowlist`` entry (entries are registrable domains or
   names below one: ``old.reddit.com`` matches ``reddit.com``; the public suffix list is
   used offline, so ``co.uk`` never matches everything) -> ``archive``,
   ``allowlist:<entry>``;
5. a short link (``needs_resolve``, e.g. ``bit.ly``) -> ``archive``,
   ``resolve-first:<host>``: where it leads is unknown until resolved, and a skipped
   link is lost for good. The worker must resolve it, ``canonicalize`` the final URL
   and call ``decide`` again before capturing;
6. otherwise -> ``skip``, ``not-deletable``.

Rejected URLs: ``occurrences_for_post`` drops them from its result and logs one warning
per post on the ``shared.links`` logger; ``analyze_post`` returns them as well
(``PostLinks.rejected``) for callers that record them.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from shared.links.canonical import CanonicalUrl, RejectedUrl, canonicalize
from shared.links.domains import host_matches
from shared.links.extract import (
    ExtractedLink,
    extract_links,
    extract_links_text,
    has_markup,
)
from shared.links.urlparts import scheme_of, supported_scheme
from shared.messages import LinkOccurrence

log = logging.getLogger("shared.links")

DEFAULT_ALLOWLIST: tuple[str, ...] = (
    "reddit.com",
    "redd.it",
    "tiktok.com",
    "x.com",
    "twitter.com",
    "instagram.com",
    "youtube.com",
    "youtu.be",
    "facebook.com",
    "fb.watch",
    "bsky.app",
)
"""Registrable domains archived in ``deletable`` mode unless DELETABLE_ALLOWLIST says otherwise."""
DEFAULT_EXCLUDE: tuple[str, ...] = (
    "web.archive.org",
    "archive.org",
    "archive.today",
    "archive.ph",
    "archive.is",
)
"""Domains never archived unless EXCLUDE_DOMAINS says otherwise (archives of archives)."""

Mode = Literal["deletable", "all"]
Decision = Literal["archive", "skip"]


def _entry(value: str) -> str:
    v = value.strip().lower().rstrip(".")
    if v.startswith("*."):
        v = v[2:]
    v = v.lstrip(".")
    if not v.isascii():
        with contextlib.suppress(UnicodeError):
            v = v.encode("idna").decode("ascii")
    return v


def _entries(values: Iterable[str]) -> frozenset[str]:
    return frozenset(e for e in (_entry(v) for v in values if isinstance(v, str)) if e)


@dataclass(frozen=True)
class DomainPolicy:
    """ARCHIVE_MODE plus the allowlist and exclude list (entries normalised on creation)."""

    mode: Mode = "deletable"
    allowlist: frozenset[str] = field(default_factory=lambda: frozenset(DEFAULT_ALLOWLIST))
    exclude: frozenset[str] = field(default_factory=lambda: frozenset(DEFAULT_EXCLUDE))

    def __post_init__(self) -> None:
        if self.mode not in ("deletable", "all"):
            raise ValueError(f"ARCHIVE_MODE must be 'deletable' or 'all', not {self.mode!r}")
        object.__setattr__(self, "allowlist", _entries(self.allowlist))
        object.__setattr__(self, "exclude", _entries(self.exclude))

    def decide(self, canonical: CanonicalUrl) -> tuple[Decision, str]:
        """(decision, reason) for one canonical URL; see the module docstring."""
        if not supported_scheme(canonical.canonical):
            return "skip", f"scheme:{scheme_of(canonical.canonical)[:20]}"
        host = canonical.domain
        hit = host_matches(host, self.exclude)
        if hit is not None:
            return "skip", f"excluded:{hit}"
        if self.mode == "all":
            return "archive", "mode:all"
        hit = host_matches(host, self.allowlist)
        if hit is not None:
            return "archive", f"allowlist:{hit}"
        if canonical.needs_resolve:
            return "archive", f"resolve-first:{host}"
        return "skip", "not-deletable"


@dataclass(frozen=True)
class PostLinks:
    """Everything found in one post."""

    occurrences: list[LinkOccurrence]
    rejected: list[RejectedUrl]


def extract_any(
    content: str, post_url: str, *, forum_hosts: Iterable[str] = ()
) -> list[ExtractedLink]:
    """HTML rules when ``content`` has tags, plain-text/BBCode rules otherwise."""
    hosts = list(forum_hosts)
    if has_markup(content):
        return extract_links(content, post_url, forum_hosts=hosts)
    return extract_links_text(content, post_url, forum_hosts=hosts)


def analyze_post(
    html: str, post_url: str, policy: DomainPolicy, *, forum_hosts: Iterable[str] = ()
) -> PostLinks:
    """Occurrences (one per canonical URL and quote flag, document order) and rejects."""
    occurrences: list[LinkOccurrence] = []
    rejected: list[RejectedUrl] = []
    seen: set[tuple[str, bool]] = set()
    for link in extract_any(html, post_url, forum_hosts=forum_hosts):
        c = canonicalize(link.url)
        if isinstance(c, RejectedUrl):
            rejected.append(c)
            continue
        key = (c.canonical, link.in_quote)
        if key in seen:
            continue
        seen.add(key)
        decision, reason = policy.decide(c)
        occurrences.append(
            LinkOccurrence(
                original_url=c.original,
                normalized_url=c.normalized,
                canonical_url=c.canonical,
                domain=c.domain,
                in_quote=link.in_quote,
                context_snippet=link.context,
                policy=decision,
                policy_reason=reason,
                needs_resolve=c.needs_resolve,
            )
        )
    return PostLinks(occurrences, rejected)


def occurrences_for_post(
    html: str, post_url: str, policy: DomainPolicy, *, forum_hosts: Iterable[str] = ()
) -> list[LinkOccurrence]:
    """Extract, canonicalize and apply the policy; rejected URLs are logged, not returned."""
    result = analyze_post(html, post_url, policy, forum_hosts=forum_hosts)
    if result.rejected:
        shown = "; ".join(f"{r.reason} {r.original[:120]!r}" for r in result.rejected[:5])
        more = f" (+{len(result.rejected) - 5} more)" if len(result.rejected) > 5 else ""
        log.warning(
            "post %s: %d link(s) rejected: %s%s", post_url, len(result.rejected), shown, more
        )
    return result.occurrences
