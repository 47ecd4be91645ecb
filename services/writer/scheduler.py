"""The job scheduler: dispatch due jobs within the global and per-domain limits.

Runs every ``SCHEDULER_INTERVAL_SECONDS`` in the writer loop. A dispatch is recorded in the
database (status running, attempt + 1, deadline) *before* the ``CaptureJob`` is published;
``published_at`` is set once JetStream stored it. Jobs that are running but not published
(a crash or NATS outage between the two) are published again with the same attempt, so the
same ``Nats-Msg-Id``: JetStream drops the duplicate. A running job silent past its deadline
is dispatched again as a new attempt, until ``MAX_ATTEMPTS``.

In flight = status ``running``: never more than ``WORKER_CONCURRENCY`` capture jobs and
``MEDIA_CONCURRENCY`` media jobs overall, nor more than ``PER_DOMAIN_CONCURRENCY`` of each
kind per registrable domain (``old.reddit.com`` and ``www.reddit.com`` share ``reddit.com``)
still talking to their host, whatever the number of workers: a job whose worker said it is
done with the host (``capture.released``, ``host_released_at``) post-processes and uploads
outside its domain's count, so the host's next job starts meanwhile; nothing to a domain
backing off. Media jobs get ``MEDIA_JOB_DEADLINE_SECONDS`` instead of
``JOB_DEADLINE_SECONDS`` (their Progress records keep moving it on while they download).

Domain back-off: a hook failure whose code means the site asked us to slow down
(``shared.hooks.error_codes.backs_off_domain``: ``E_*_RATE_LIMITED``, ``E_*_HTTP_429``) backs
off the link's whole registrable domain, capture and media jobs alike: none of its jobs is
dispatched before ``until``: 5 min, 30 min, 2 h, then 12 h while it keeps answering so after
each wait, or the wait its Retry-After asked for when longer (up to a day). Answers that
arrive while it backs off (the fetch's and the browser's of one capture, another job in
flight) count as one. Writes ``domain_backoff``; jobs only through ``transitions``.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

from services.writer import transitions
from services.writer.clock import iso, parse
from services.writer.db import transaction
from services.writer.job_policy import Policy
from shared.evidence.manifest import EVIDENCE_PLUGIN
from shared.fetching import retry_after as retry_wait
from shared.hooks.error_codes import backs_off_domain
from shared.hooks.records import ArtifactRecord
from shared.hooks.retry import BACKOFF
from shared.links.domains import registrable_domain
from shared.links.urlparts import supported_scheme
from shared.messages import CaptureJob
from shared.subjects import JOB_CAPTURE, JOB_MEDIA

log = logging.getLogger(__name__)

SUBJECT_OF_KIND = {"capture": JOB_CAPTURE, "media": JOB_MEDIA}


@dataclass(frozen=True)
class Limits:
    """How much may be in flight."""

    concurrency: int = 4
    per_domain: int = 1
    media_concurrency: int = 1
    """Media jobs in flight (counted apart from capture jobs; per_domain applies to each)."""


@dataclass(frozen=True)
class Dispatch:
    """A job to publish: its subject and message."""

    subject: str
    job: CaptureJob


def plan(conn: sqlite3.Connection, policy: Policy, limits: Limits, now: datetime) -> list[Dispatch]:
    """Record this tick's dispatches and return every dispatch still to be published."""
    with transaction(conn):
        _expire(conn, policy, now)
        _dispatch_due(conn, policy, limits, now)
        rows = conn.execute(
            "SELECT j.id, j.link_id, j.snapshot_id, j.kind, j.attempts, j.deadline,"
            " j.retry_hooks, l.canonical_url, s.final_url FROM archive_jobs j"
            " JOIN links l ON l.id = j.link_id LEFT JOIN snapshots s ON s.id = j.snapshot_id"
            " WHERE j.status = 'running' AND j.published_at IS NULL ORDER BY j.id"
        ).fetchall()
        kept = {r["id"]: _kept(conn, r["snapshot_id"]) for r in rows if r["attempts"] > 1}
    return [
        Dispatch(
            SUBJECT_OF_KIND[r["kind"]],
            CaptureJob(
                job_id=r["id"],
                link_id=r["link_id"],
                snapshot_id=r["snapshot_id"],
                url=r["canonical_url"],
                attempt=r["attempts"],
                max_attempts=policy.max_attempts,
                hooks=json.loads(r["retry_hooks"]) if r["retry_hooks"] else None,
                deadline=parse(r["deadline"]),
                kept=kept.get(r["id"], []),
                final_url=r["final_url"],
            ),
        )
        for r in rows
    ]


def _kept(conn: sqlite3.Connection, snapshot_id: str) -> list[ArtifactRecord]:
    """The files earlier attempts of the snapshot stored, oldest first (the retry's manifest
    lists the newest of each plugin and path)."""
    return [
        ArtifactRecord(
            plugin=r["plugin"],
            kind=r["kind"],
            path=r["path"],
            s3_key=r["s3_key"],
            content_type=r["content_type"],
            bytes=r["bytes"],
            sha256=r["sha256"],
            truncated=bool(r["truncated"]),
        )
        for r in conn.execute(
            "SELECT plugin, kind, path, s3_key, content_type, bytes, sha256, truncated"
            " FROM archive_artifacts WHERE snapshot_id = ? AND plugin IS NOT NULL"
            " AND plugin != ? ORDER BY id",
            (snapshot_id, EVIDENCE_PLUGIN),
        )
    ]


def mark_published(conn: sqlite3.Connection, published: list[CaptureJob], now: datetime) -> None:
    """Remember that JetStream stored these dispatches."""
    if not published:
        return
    with transaction(conn):
        transitions.published(conn, [(j.job_id, j.attempt) for j in published], iso(now))


def _deadline(policy: Policy, kind: str) -> timedelta:
    return policy.media_job_deadline if kind == "media" else policy.job_deadline


def _expire(conn: sqlite3.Connection, policy: Policy, now: datetime) -> None:
    """Running jobs past their deadline: dispatch again as a new attempt, or fail."""
    expired = conn.execute(
        "SELECT id, link_id, attempts, kind FROM archive_jobs WHERE status = 'running'"
        " AND deadline < ? AND published_at IS NOT NULL",
        (iso(now),),
    ).fetchall()
    for r in expired:
        if r["attempts"] >= policy.max_attempts:
            log.warning("job %d: no result after %d attempts; failed", r["id"], r["attempts"])
            transitions.fail_permanent(
                conn,
                r["id"],
                r["link_id"],
                f"no result before the deadline in {r['attempts']} attempts",
                iso(now),
            )
            continue
        log.info(
            "job %d: attempt %d silent past its deadline; dispatching again", r["id"], r["attempts"]
        )
        transitions.dispatch(conn, r["id"], _deadline(policy, r["kind"]), now)


def _dispatch_due(conn: sqlite3.Connection, policy: Policy, limits: Limits, now: datetime) -> None:
    """Start as many due queued jobs as the limits allow, best priority first: capture and
    media jobs each within their own concurrency, neither to a domain backing off."""
    backing_off = backed_off(conn, iso(now))
    for kind, concurrency in (("capture", limits.concurrency), ("media", limits.media_concurrency)):
        _dispatch_kind(conn, policy, limits, now, kind, concurrency, backing_off)


def _dispatch_kind(
    conn: sqlite3.Connection,
    policy: Policy,
    limits: Limits,
    now: datetime,
    kind: str,
    concurrency: int,
    backing_off: set[str],
) -> None:
    running = conn.execute(
        "SELECT l.domain, count(*), count(*) - count(j.host_released_at) FROM archive_jobs j"
        " JOIN links l ON l.id = j.link_id WHERE j.status = 'running' AND j.kind = ?"
        " GROUP BY l.domain",
        (kind,),
    ).fetchall()
    per_site: Counter[str] = Counter()
    for domain, _, talking in running:
        per_site[registrable_domain(domain)] += talking
    free = concurrency - sum(n for _, n, _ in running)
    if free <= 0:
        return
    candidates = conn.execute(
        "SELECT id, link_id, domain, canonical_url FROM ("
        " SELECT j.id, j.link_id, l.domain, l.canonical_url, j.priority, j.not_before,"
        "  row_number() OVER (PARTITION BY l.domain ORDER BY j.priority DESC, j.not_before,"
        "  j.id) AS rn"
        " FROM archive_jobs j JOIN links l ON l.id = j.link_id"
        " WHERE j.status = 'queued' AND j.kind = ? AND j.not_before <= ?)"
        " WHERE rn <= ? ORDER BY priority DESC, not_before, id",
        (kind, iso(now), limits.per_domain),
    ).fetchall()
    for c in candidates:
        if free <= 0:
            break
        if not supported_scheme(c["canonical_url"]):
            transitions.fail_permanent(
                conn, c["id"], c["link_id"], "unsupported URL scheme", iso(now)
            )
            continue
        site = registrable_domain(c["domain"])
        if per_site[site] >= limits.per_domain or site in backing_off:
            continue
        transitions.dispatch(conn, c["id"], _deadline(policy, kind), now)
        per_site[site] += 1
        free -= 1


def on_failure(
    conn: sqlite3.Connection,
    link_id: int,
    error_code: str | None,
    now: datetime,
    retry_after_s: float | None = None,
) -> None:
    """A hook failed: when its code asks us to slow down, the link's whole registrable
    domain backs off (5 min, 30 min, 2 h, then 12 h as it keeps answering so), or as long as
    the site's Retry-After asked (`retry_after_s`) when that is longer (at most a day)."""
    if not backs_off_domain(error_code):
        return
    row = conn.execute("SELECT domain FROM links WHERE id = ?", (link_id,)).fetchone()
    if row is None:
        return
    domain = registrable_domain(row[0])
    hits_row = conn.execute(
        "SELECT hits, until FROM domain_backoff WHERE domain = ?", (domain,)
    ).fetchone()
    asked = retry_wait.bounded(retry_after_s) if retry_after_s is not None else timedelta(0)
    if hits_row is not None and hits_row["until"] > iso(now):
        # still backing off: the answer comes from a job dispatched before the back-off
        # began (another hook of the same capture, another job in flight then), not from
        # the site answering so again after the wait: no new hit, but a longer wait it
        # asks for is kept
        log.info("%s answered %s again while backing off", domain, error_code)
        if now + asked <= parse(hits_row["until"]):
            return
        hits, until = int(hits_row["hits"]), now + asked
    else:
        stale = hits_row is None or hits_row["until"] < iso(now - timedelta(days=1))
        hits = 1 if stale else int(hits_row["hits"]) + 1
        until = now + max(BACKOFF[min(hits, len(BACKOFF)) - 1], asked)
    conn.execute(
        "INSERT INTO domain_backoff (domain, until, reason, hits, updated_at)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (domain) DO UPDATE SET"
        " until = max(domain_backoff.until, excluded.until), reason = excluded.reason,"
        " hits = excluded.hits, updated_at = excluded.updated_at",
        (domain, iso(until), f"{error_code} (link {link_id})", hits, iso(now)),
    )
    log.warning("%s answered %s: no job of it before %s", domain, error_code, iso(until))


def backing_off_until(conn: sqlite3.Connection, domain: str, now: str) -> str | None:
    """Until when the registrable domain backs off, or None when it does not now."""
    row = conn.execute(
        "SELECT until FROM domain_backoff WHERE domain = ? AND until > ?", (domain, now)
    ).fetchone()
    return None if row is None else str(row[0])


def backed_off(conn: sqlite3.Connection, now: str) -> set[str]:
    """Registrable domains no job may be dispatched to now."""
    return {r[0] for r in conn.execute("SELECT domain FROM domain_backoff WHERE until > ?", (now,))}
