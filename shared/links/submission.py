"""What a person submits: the rule the web checks at once and the writer applies.

A submitted URL bypasses the allowlist (a person asked for exactly this URL) but never the
exclude list: ``EXCLUDE_DOMAINS`` applies to submissions as to links found in posts.
"""

from __future__ import annotations

from shared.links.canonical import CanonicalUrl, RejectedUrl, canonicalize
from shared.links.policy import DomainPolicy

MAX_SUBMITTED_CHARS = 4096


def check_submission(url: str, policy: DomainPolicy) -> CanonicalUrl | RejectedUrl:
    """The URL's canonical forms, or why it will not be archived (never raises)."""
    if not isinstance(url, str):
        return RejectedUrl(repr(url)[:200], "not-a-string")
    url = url.strip()
    if len(url) > MAX_SUBMITTED_CHARS:
        return RejectedUrl(url[:200], "too-long")
    canonical = canonicalize(url)
    if isinstance(canonical, RejectedUrl):
        return canonical
    decision, reason = policy.decide(canonical)
    if decision == "skip" and reason.startswith(("excluded:", "scheme:")):
        return RejectedUrl(url, reason)
    return canonical
