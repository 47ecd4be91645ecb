"""Builders of writer inputs and helpers that read the database back."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from services.writer import moderation, scheduler
from services.writer.apply import BatchResult, Item, apply_batch
from services.writer.job_policy import Policy
from services.writer.liveness import dispatch as liveness
from services.writer.liveness.budget import HostBudget
from services.writer.scheduler import Limits
from shared.hooks.records import ArchiveResultRecord, HookRecord
from shared.links.canonical import CanonicalUrl, canonicalize
from shared.links.policy import DEFAULT_EXCLUDE, DomainPolicy
from shared.messages import (
    CaptureDone,
    CaptureEvent,
    CaptureJob,
    FeedPost,
    HostReleased,
    LinkOccurrence,
    LivenessCheck,
    LivenessResult,
    Message,
)
from shared.subjects import (
    CAPTURE_BINARIES,
    CAPTURE_DONE,
    CAPTURE_EVIDENCE,
    CAPTURE_EXTERNAL,
    CAPTURE_RELEASED,
    CAPTURE_RESULT,
    CAPTURE_TIMESTAMP,
    CHECK_RESULT,
    CMD_CHECK,
    CMD_EXCLUDE,
    CMD_INCLUDE,
    CMD_REARCHIVE,
    CMD_RETRY,
    CMD_SUBMIT,
    CMD_TAKEDOWN,
    CMD_UNDO,
    FEED_GAP,
    FEED_POST,
)

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
SKIPPED_SITE = "skipped.example"
TEST_DOMAINS = DomainPolicy(mode="all", exclude=frozenset(DEFAULT_EXCLUDE) | {SKIPPED_SITE})
"""The harness's domain policy (the writer decides from its own): every site but the default
exclusions and SKIPPED_SITE, the fixture site tests show skipped."""

SUBJECT = {
    "FeedPost": FEED_POST,
    "FeedGap": FEED_GAP,
    "CaptureEvent": CAPTURE_RESULT,
    "CaptureDone": CAPTURE_DONE,
    "HostReleased": CAPTURE_RELEASED,
    "SubmitCommand": CMD_SUBMIT,
    "RearchiveCommand": CMD_REARCHIVE,
    "WorkerBinaries": CAPTURE_BINARIES,
    "TakedownCommand": CMD_TAKEDOWN,
    "ExcludeCommand": CMD_EXCLUDE,
    "RetryCommand": CMD_RETRY,
    "EvidenceReport": CAPTURE_EVIDENCE,
    "TimestampResult": CAPTURE_TIMESTAMP,
    "ExternalArchiveResult": CAPTURE_EXTERNAL,
    "CheckCommand": CMD_CHECK,
    "LivenessResult": CHECK_RESULT,
    "UndoTakedownCommand": CMD_UNDO,
    "IncludeCommand": CMD_INCLUDE,
}


def occ(url: str, *, in_quote: bool = False) -> LinkOccurrence:
    """A link occurrence as the poller would send it (whether it is archived, the writer's
    domain policy decides: the harness's is TEST_DOMAINS)."""
    c = canonicalize(url)
    assert isinstance(c, CanonicalUrl), c
    return LinkOccurrence(
        original_url=url,
        normalized_url=c.normalized,
        canonical_url=c.canonical,
        domain=c.domain,
        in_quote=in_quote,
        context_snippet=f"see {url}",
    )


def post(
    guid: str, *links: LinkOccurrence, content: str | None = None, seen_at: datetime = T0
) -> FeedPost:
    """A FeedPost; content defaults to something derived from its links."""
    html = content if content is not None else " ".join(o.original_url for o in links) or guid
    return FeedPost(
        feed_url="https://forum.test/posts.rss",
        guid=guid,
        post_url=f"https://forum.test/p/{guid}",
        topic_url="https://forum.test/t/1",
        title="A topic",
        author="alice",
        published_at=seen_at,
        content_html=html,
        content_hash=hashlib.sha256(html.encode()).hexdigest(),
        links=list(links),
        seen_at=seen_at,
    )


def event(
    job: sqlite3.Row | dict[str, Any],
    seq: int,
    record: HookRecord,
    *,
    attempt: int | None = None,
    run: int = 1,
    worker: str = "host-a:1",
    more: Sequence[HookRecord] = (),
) -> CaptureEvent:
    """A CaptureEvent for a job row (`more`: records sent with `record`)."""
    return CaptureEvent(
        job_id=job["id"],
        link_id=job["link_id"],
        snapshot_id=job["snapshot_id"],
        attempt=attempt if attempt is not None else max(job["attempts"], 1),
        run=run,
        seq=seq,
        worker=worker,
        record=record,
        more=list(more),
    )


def done(
    job: sqlite3.Row | dict[str, Any],
    *,
    records: int = 0,
    retry: list[str] | None = None,
    error: str | None = None,
    attempt: int | None = None,
    run: int = 1,
) -> CaptureDone:
    """A CaptureDone for a job row."""
    return CaptureDone(
        **report_ids(job, attempt, run),
        records=records,
        retry_hooks=retry or [],
        error=error,
    )


TSA = "http://127.0.0.9/tsr"
"""The harness's timestamp authority (TSA_URLS): a manifest's token is pending with it."""


def report_ids(
    job: sqlite3.Row | dict[str, Any] | CaptureJob, attempt: int | None, run: int
) -> dict[str, Any]:
    """The AttemptReport fields of a worker's report on a job row (or a dispatched job)."""
    if isinstance(job, CaptureJob):
        job = {"id": job.job_id, "link_id": job.link_id, "snapshot_id": job.snapshot_id,
               "attempts": job.attempt}  # fmt: skip
    return {"job_id": job["id"], "link_id": job["link_id"], "snapshot_id": job["snapshot_id"],
            "attempt": attempt if attempt is not None else job["attempts"], "run": run,
            "worker": "host-a:1"}  # fmt: skip


def released(
    job: sqlite3.Row | dict[str, Any] | CaptureJob, *, attempt: int | None = None, run: int = 1
) -> HostReleased:
    """A HostReleased for a job row (or a dispatched CaptureJob)."""
    return HostReleased(**report_ids(job, attempt, run))


@dataclass
class Harness:
    """A database plus a clock; apply() runs messages through the real batch path."""

    conn: sqlite3.Connection
    policy: Policy = field(
        default_factory=lambda: Policy(
            media_jobs=False, domains=TEST_DOMAINS, timestamp_authorities=(TSA,)
        )
    )
    """Media jobs are off by default (the capture tests count jobs); the media tests turn
    them on (tests/writer/test_media_jobs.py)."""
    now: datetime = T0
    budget: HostBudget = field(default_factory=lambda: HostBudget(0))
    """Liveness checks per domain this hour (no limit unless a test sets one)."""

    def apply(self, *messages: Message) -> BatchResult[None]:
        items = [Item(SUBJECT[type(m).__name__], m, None) for m in messages]
        return apply_batch(self.conn, self.policy, items, self.now)

    def dispatch(
        self, concurrency: int = 100, per_domain: int = 100, media: int = 100
    ) -> list[CaptureJob]:
        """One scheduler tick whose publishes all succeed."""
        limits = Limits(concurrency, per_domain, media)
        plans = scheduler.plan(self.conn, self.policy, limits, self.now)
        jobs = [p.job for p in plans]
        scheduler.mark_published(self.conn, jobs, self.now)
        return jobs

    def checks(self) -> list[LivenessCheck]:
        """One run of the liveness dispatcher whose publishes all succeed."""
        found = liveness.plan(self.conn, self.policy.liveness, self.budget, self.now)
        liveness.mark_published(self.conn, found)
        return found

    def answer(self, check: LivenessCheck, answer: str, **fields: Any) -> LivenessResult:
        """A worker's result of `check`, answered now (via `http` unless said)."""
        values: dict[str, Any] = {"via": "http", "reason": "ok", "worker": "host-a:1"}
        return LivenessResult(
            link_id=check.link_id,
            seq=check.seq,
            checked_at=self.now,
            answer=answer,  # type: ignore[arg-type]
            **(values | fields),
        )

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)

    def purge(self) -> list[int]:
        """The housekeeping's purge of taken-down links whose undo window ended, now."""
        return moderation.purge_due(self.conn, self.now)

    def rows(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        return self.conn.execute(sql, args).fetchall()

    def tuples(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self.conn.execute(sql, args)]

    def one(self, sql: str, *args: Any) -> Any:
        row = self.conn.execute(sql, args).fetchone()
        return None if row is None else row[0]

    def job(self, job_id: int) -> sqlite3.Row:
        return self.conn.execute("SELECT * FROM archive_jobs WHERE id = ?", (job_id,)).fetchone()

    def jobs(self, status: str | None = None) -> list[sqlite3.Row]:
        if status is None:
            return self.rows("SELECT * FROM archive_jobs ORDER BY id")
        return self.rows("SELECT * FROM archive_jobs WHERE status = ? ORDER BY id", status)


def user_tables(conn: sqlite3.Connection) -> list[str]:
    """Every table holding data (FTS shadow tables excluded; the FTS tables themselves included)."""
    rows = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        " ORDER BY name"
    ).fetchall()
    fts = [n for n, sql in rows if "USING fts5" in (sql or "")]
    return [n for n, _ in rows if not any(n.startswith(f"{f}_") for f in fts)]


def dump(
    conn: sqlite3.Connection, *, skip: tuple[str, ...] = ()
) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, sorted: equal dumps mean equal databases."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    for name in user_tables(conn):
        if name in skip:
            continue
        full_text = name in ("link_text_fts", "link_text_history")
        rows = conn.execute(
            f"SELECT rowid, * FROM {name}" if full_text else f"SELECT * FROM {name}"
        ).fetchall()
        out[name] = sorted((tuple(r) for r in rows), key=repr)
    return out


FETCH_HOOK = "on_Snapshot__41_fetch.py"


def retry_waiting(h: Harness, url: str) -> sqlite3.Row:
    """A new post's link whose capture failed with a 503: its retry, the same job queued
    again, waits for its time (5 min on). Returns that job's row."""
    h.apply(post(f"retry-{url}", occ(url)))
    (job,) = h.dispatch()
    failed = ArchiveResultRecord(status="failed", plugin="fetch", hook=FETCH_HOOK,
                                 error_code="E_FETCH_HTTP_5XX")  # fmt: skip
    row = h.job(job.job_id)
    h.apply(event(row, 0, failed), done(row, records=1, retry=[FETCH_HOOK]))
    return h.job(job.job_id)
