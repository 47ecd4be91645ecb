"""Whether a link gets a capture job: domain policy, cache window, quote-only rule.

The domain policy is the writer's own (``ARCHIVE_MODE``, ``DELETABLE_ALLOWLIST``,
``EXCLUDE_DOMAINS`` from its settings, ``shared.links.policy.DomainPolicy``), applied to the
canonical URL the poller sent (after it resolved short links): the one place a feed link's
archive-or-skip is decided, so changing those settings takes a writer restart and nothing
else.

Every decision is recorded as an ``archive_jobs`` row: ``queued`` or ``skipped_cached`` /
``skipped_policy`` with the reason, so the UI and an operator can see why a link was not
captured.

Manual requests: a person who submits a URL bypasses the domain policy's allowlist (they
asked for this URL explicitly) but never its exclude list (``shared/links/submission.py``,
the rule the web checks too), nor the cache window: a capture in flight, or one that finished within
``CACHE_WINDOW_SECONDS``, is the answer to their request. ``Re-archive`` ignores the cache
window and only avoids a second job while one is queued or running.

A liveness check that found the original changed (its canonical text, or its post's text,
differs from the newest capture's) asks for an ordinary capture (``changed``): like a
re-archive it ignores the cache window and never makes a second job while one is queued or
running, at the feed's priority.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from services.writer.liveness.rules import LivenessRules
from services.writer.tombstones import TombstoneKey
from shared.links.canonical import CanonicalUrl
from shared.links.policy import DomainPolicy

JobStatus = Literal["queued", "skipped_cached", "skipped_policy"]
Source = Literal["feed", "submit", "rearchive", "changed"]

MANUAL_PRIORITY = 10
"""Priority of jobs a person asked for (feed jobs have 0; higher runs first)."""


@dataclass(frozen=True)
class Policy:
    """The decision rules, from the settings."""

    cache_window: timedelta = timedelta(hours=1)
    quote_only_links: bool = False
    max_attempts: int = 5
    job_deadline: timedelta = timedelta(minutes=15)
    domains: DomainPolicy = field(default_factory=DomainPolicy)
    """The domain policy: submissions bypass its allowlist, never its exclude list."""
    media_jobs: bool = True
    """Give video links (and pages showing a video) a media job."""
    media_job_deadline: timedelta = timedelta(minutes=65)
    """A dispatched media job silent this long is dispatched again (downloads run long)."""
    takedown_key: TombstoneKey = field(default_factory=TombstoneKey)
    """What takedown tombstones are hashed with (TAKEDOWN_KEY; see tombstones.py)."""
    takedown_undo: timedelta = timedelta(days=7)
    """TAKEDOWN_UNDO_DAYS: how long a takedown can be undone; what was captured of the link is
    kept hidden until then and purged after (services/writer/moderation.py)."""
    timestamp_authorities: tuple[str, ...] = ()
    """TSA_URLS: every capture's manifest is timestamped by each
    (services/writer/evidence_store.py)."""
    timestamp_retry: timedelta = timedelta(minutes=1)
    """TSA_RETRY_SECONDS: the first delay before a timestamp is asked for again."""
    external_services: tuple[str, ...] = ()
    """WAYBACK_SUBMIT, ARCHIVE_TODAY_SUBMIT: the public archives every archived link is
    submitted to (services/writer/external_archives.py)."""
    external_retry: timedelta = timedelta(minutes=5)
    """EXTERNAL_ARCHIVE_RETRY_SECONDS: the first delay before a submission is asked again."""
    liveness: LivenessRules = field(default_factory=LivenessRules)
    """When archived links are checked again, and when a `gone` is believed."""
    publish_logged_in_captures: bool = False
    """PUBLISH_LOGGED_IN_CAPTURES: a capture made with the site's cookies keeps its session
    files public (shared.session_files); otherwise they are private."""


@dataclass(frozen=True)
class LinkState:
    """What the database knows about a link when a decision is made."""

    last_archived_at: datetime | None
    active_job_id: int | None
    status: str = "pending"
    """links.status (pending, archived, failed, skipped)."""
    blocked: str | None = None
    """Why the link must never be captured (taken down, domain excluded by an admin)."""
    active_job_due: datetime | None = None
    """When the link's queued job is due (a retry waits for its time); None when it has no
    queued job."""


@dataclass(frozen=True)
class Decision:
    """The outcome for one link: a job status, why, and its priority."""

    status: JobStatus
    reason: str
    priority: int = 0
    code: str = "allowed"
    """The reason as a short fixed word (a metric label): allowed, recapture, domain_policy,
    in_flight, cache_window, quote_only, submit, rearchive, changed, hastened (the link's
    queued job waiting for its retry time is made due now: `transitions.hasten`)."""


def decide(
    state: LinkState,
    *,
    source: Source,
    now: datetime,
    policy: Policy,
    url: CanonicalUrl | None = None,
    quote_only: bool = False,
) -> Decision:
    """Decide whether a link seen in a post (its canonical forms `url`), submitted,
    re-archive-requested or found changed at source gets a job."""
    manual = source in ("submit", "rearchive")
    if state.blocked:
        return Decision("skipped_policy", state.blocked)
    policy_reason = ""
    if source == "feed" and url is not None:
        verdict, policy_reason = policy.domains.decide(url)
        if verdict == "skip":
            return Decision("skipped_policy", policy_reason, code="domain_policy")
    if state.active_job_id is not None:
        due = state.active_job_due
        if manual and due is not None and due > now:  # asked for now: the wait ends
            reason = f"{source} requested: job {state.active_job_id}, due {due.isoformat()}, now"
            return Decision("queued", reason, MANUAL_PRIORITY, code="hastened")
        waiting = " (queued, not started)" if due is not None else ""
        reason = f"in flight: job {state.active_job_id}{waiting}"
        return Decision("skipped_cached", reason, code="in_flight")
    if source == "changed":
        return Decision("queued", "changed at source", code="changed")
    last = state.last_archived_at
    if source != "rearchive" and last is not None and now - last < policy.cache_window:
        window = int(policy.cache_window.total_seconds())
        reason = f"archived at {last.isoformat()} (window {window}s)"
        return Decision("skipped_cached", reason, code="cache_window")
    if source == "feed" and quote_only and last is not None and not policy.quote_only_links:
        reason = f"quote-only link, archived at {last.isoformat()}"
        return Decision("skipped_cached", reason, code="quote_only")
    if manual:
        return Decision("queued", f"{source} requested", MANUAL_PRIORITY, code=source)
    reason = policy_reason or "allowed"
    if last is None:
        return Decision("queued", reason)
    return Decision("queued", f"{reason}; re-capture after window", code="recapture")
