"""The one-call pipeline of the poller: a post's links as occurrences, every form of each URL.

``occurrences_for_post`` extracts (quote-aware), canonicalises and de-duplicates (one
occurrence per canonical URL and quote flag, in document order). Whether a link is archived
is not decided here: the writer decides with its own settings (``shared.links.policy``).
Rejected URLs: ``occurrences_for_post`` drops them and logs one warning per post on the
``shared.links`` logger; ``analyze_post`` returns them as well (``PostLinks.rejected``) for
callers that record them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from shared.links.canonical import RejectedUrl, canonicalize
from shared.links.link_extract import ExtractedLink, extract_links, extract_links_text, has_markup
from shared.messages import LinkOccurrence

log = logging.getLogger("shared.links")


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


def analyze_post(html: str, post_url: str, *, forum_hosts: Iterable[str] = ()) -> PostLinks:
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
        occurrences.append(
            LinkOccurrence(
                original_url=c.original,
                normalized_url=c.normalized,
                canonical_url=c.canonical,
                domain=c.domain,
                in_quote=link.in_quote,
                context_snippet=link.context,
                needs_resolve=c.needs_resolve,
            )
        )
    return PostLinks(occurrences, rejected)


def occurrences_for_post(
    html: str, post_url: str, *, forum_hosts: Iterable[str] = ()
) -> list[LinkOccurrence]:
    """Extract and canonicalise; rejected URLs are logged, not returned."""
    result = analyze_post(html, post_url, forum_hosts=forum_hosts)
    if result.rejected:
        shown = "; ".join(f"{r.reason} {r.original[:120]!r}" for r in result.rejected[:5])
        more = f" (+{len(result.rejected) - 5} more)" if len(result.rejected) > 5 else ""
        log.warning(
            "post %s: %d link(s) rejected: %s%s", post_url, len(result.rejected), shown, more
        )
    return result.occurrences
