"""Every transition of ``archive_jobs`` and ``snapshots``: the one module that writes them.

The rest of the writer decides (policy, done, scheduler, dedup, binaries) and calls one of
the named transitions below; none of them writes either table itself
(``tests/writer/test_table_owners.py`` keeps it so).

Jobs (``archive_jobs.status``)::

    (new) --skip-------------> skipped_cached | skipped_policy        (finished at once)
    (new) --queue------------> queued
    queued --dispatch--------> running     (attempt + 1, deadline; snapshot made at the first)
    running --published------> running     (JetStream stored the CaptureJob)
    running --heartbeat------> running     (a capture event moved the deadline on)
    running --release_host---> running     (done with the host: no longer counted per domain)
    running --rehold_host----> running     (a redelivered run talks to the host again)
    running --fail_retry-----> queued      (not_before = now + backoff, hooks to re-run)
    running --succeed--------> succeeded   (snapshot sealed, link archived)
    any --fail_permanent-----> failed      (snapshot sealed, link failed unless archived before)
    finished --requeue_hooks-> queued      (hooks skipped for a missing binary, binary now here)
    any --move_to_link-------> same status, on the link another was merged into (dedup)

Media jobs (``kind = 'media'``, made by ``media.py``) take the same transitions, with
two of their own to be made; none of their transitions touches the link's status (the
page's capture owns that: ``succeed`` and ``fail_permanent`` of a media job only finish it)::

    (new) --queue_media------> queued
    (new) --skip_media-------> skipped_cached   (another link's job downloads the same video)

Snapshots (``snapshots.status``): ``queued`` when made at a job's first dispatch (or
``started`` when ``adopt_snapshot`` meets an event of a snapshot this database never made),
``started`` when its first hook starts (``start``), whatever the hooks' ``Snapshot`` record
says (``report_snapshot``), ``sealed`` when its job finishes. Each attempt that ends writes
what it achieved in ``snapshots.outcome`` (``attempt_outcome``: succeeded, partial, failed).
"""

from __future__ import annotations

import os
import sqlite3
import time
from datetime import datetime, timedelta

from services.writer import linkstore
from services.writer.clock import iso, parse
from services.writer.job_policy import Decision, LinkState
from services.writer.metrics import JOB_OUTCOMES, POLICY_DECISIONS


def new_snapshot_id() -> str:
    """A UUIDv7 as 32 hex digits: unique, and time-ordered so that inserts append to the
    index instead of landing on random pages."""
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    value = (value & ~(0xF << 76)) | (0x7 << 76)  # version 7
    value = (value & ~(0x3 << 62)) | (0x2 << 62)  # RFC 9562 variant
    return f"{value:032x}"


def excluded_by(conn: sqlite3.Connection, domain: str) -> str | None:
    """The admin's exclusion that covers a domain (itself or a parent domain), if any."""
    row = conn.execute(
        "SELECT domain FROM excluded_domains WHERE ? = domain OR ? LIKE '%.' || domain"
        " ORDER BY length(domain) LIMIT 1",
        (domain, domain),
    ).fetchone()
    return None if row is None else str(row[0])


def link_state(conn: sqlite3.Connection, link_id: int) -> LinkState:
    """When the link was last archived, its status, its queued or running job, if any, and
    whether an admin blocked it (taken down, or its domain excluded)."""
    row = conn.execute(
        "SELECT last_archived_at, status, taken_down_at, domain FROM links WHERE id = ?",
        (link_id,),
    ).fetchone()
    if row is None:
        return LinkState(None, None)
    job = conn.execute(
        "SELECT id, status, not_before FROM archive_jobs WHERE link_id = ? AND kind = 'capture'"
        " AND status IN ('queued', 'running') ORDER BY id LIMIT 1",
        (link_id,),
    ).fetchone()
    excluded = None if row[2] else excluded_by(conn, str(row[3]))
    blocked = "taken down" if row[2] else (f"domain {excluded} excluded" if excluded else None)
    waits = job is not None and job[1] == "queued" and job[2] is not None
    return LinkState(
        last_archived_at=parse(row[0]) if row[0] else None,
        active_job_id=None if job is None else int(job[0]),
        status=str(row[1]),
        blocked=blocked,
        active_job_due=parse(job[2]) if waits else None,
    )


# -- new jobs -------------------------------------------------------------------------------


def record_decision(
    conn: sqlite3.Connection,
    link_id: int,
    decision: Decision,
    now: str,
    state: LinkState | None = None,
    kind: str = "capture",
) -> int:
    """The job row of a policy decision: ``queue`` or ``skip``, or ``hasten`` the link's
    waiting job (state: the LinkState it was made from). Returns the job id."""
    if decision.code == "hastened" and state is not None and state.active_job_id is not None:
        return hasten(conn, state.active_job_id, decision, now)
    POLICY_DECISIONS.labels(decision.status, decision.code).inc()
    if decision.status == "queued":
        return queue(conn, link_id, decision, now, state, kind)
    return skip(conn, link_id, decision, now, state, kind)


def hasten(conn: sqlite3.Connection, job_id: int, decision: Decision, now: str) -> int:
    """A queued job waiting for its retry time made due now, at the decision's priority when
    that is higher (someone asked for the capture: `Decision.code` "hastened"). Returns its id."""
    POLICY_DECISIONS.labels(decision.status, decision.code).inc()
    conn.execute(
        "UPDATE archive_jobs SET not_before = min(not_before, ?), priority = max(priority, ?)"
        " WHERE id = ? AND status = 'queued'",
        (now, decision.priority, job_id),
    )
    return job_id


def skip(
    conn: sqlite3.Connection,
    link_id: int,
    decision: Decision,
    now: str,
    state: LinkState | None = None,
    kind: str = "capture",
) -> int:
    """A job that is finished as it is made: skipped_cached or skipped_policy, with why."""
    cur = conn.execute(
        "INSERT INTO archive_jobs (link_id, kind, status, reason, priority, enqueued_at,"
        " finished_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (link_id, kind, decision.status, decision.reason, decision.priority, now, now),
    )
    if decision.status == "skipped_policy" and (state is None or state.status == "pending"):
        linkstore.set_status(conn, link_id, "skipped")
    return int(cur.lastrowid or 0)


def queue(
    conn: sqlite3.Connection,
    link_id: int,
    decision: Decision,
    now: str,
    state: LinkState | None = None,
    kind: str = "capture",
) -> int:
    """A queued job, due now. It gets its snapshot when it is first dispatched."""
    cur = conn.execute(
        "INSERT INTO archive_jobs (link_id, kind, status, reason, priority, enqueued_at,"
        " not_before) VALUES (?, ?, 'queued', ?, ?, ?, ?)",
        (link_id, kind, decision.reason, decision.priority, now, now),
    )
    job_id = int(cur.lastrowid or 0)
    if state is None or state.status in ("skipped", "failed"):
        linkstore.set_status(conn, link_id, "queued")
    return job_id


def queue_media(
    conn: sqlite3.Connection, link_id: int, reason: str, priority: int, now: str
) -> int:
    """A queued media job, due now (the link's status is left alone)."""
    cur = conn.execute(
        "INSERT INTO archive_jobs (link_id, kind, status, reason, priority, enqueued_at,"
        " not_before) VALUES (?, 'media', 'queued', ?, ?, ?, ?)",
        (link_id, reason, priority, now, now),
    )
    return int(cur.lastrowid or 0)


def skip_media(conn: sqlite3.Connection, link_id: int, reason: str, now: str) -> int:
    """A media job finished as it is made: the video is another link's download."""
    cur = conn.execute(
        "INSERT INTO archive_jobs (link_id, kind, status, reason, enqueued_at, finished_at)"
        " VALUES (?, 'media', 'skipped_cached', ?, ?, ?)",
        (link_id, reason, now, now),
    )
    return int(cur.lastrowid or 0)


# -- attempts -------------------------------------------------------------------------------


def dispatch(conn: sqlite3.Connection, job_id: int, deadline: timedelta, now: datetime) -> None:
    """queued (or silent running) -> running as a new attempt; the first makes the snapshot."""
    row = conn.execute("SELECT snapshot_id FROM archive_jobs WHERE id = ?", (job_id,)).fetchone()
    if row is not None and row[0] is None:
        _create_snapshot(conn, job_id, iso(now))
    conn.execute(
        "UPDATE archive_jobs SET status = 'running', attempts = attempts + 1, dispatched_at = ?,"
        " deadline = ?, published_at = NULL, host_released_at = NULL, host_released_run = NULL"
        " WHERE id = ?",
        (iso(now), iso(now + deadline), job_id),
    )


def published(conn: sqlite3.Connection, dispatches: list[tuple[int, int]], now: str) -> None:
    """JetStream stored these (job id, attempt) dispatches."""
    conn.executemany(
        "UPDATE archive_jobs SET published_at = ? WHERE id = ? AND attempts = ?"
        " AND status = 'running'",
        [(now, job_id, attempt) for job_id, attempt in dispatches],
    )


def release_host(conn: sqlite3.Connection, job_id: int, attempt: int, run: int, now: str) -> None:
    """The attempt in flight is done talking to its host (idempotent; a late release of an
    older run, one that a later run re-held, or of another attempt changes nothing)."""
    conn.execute(
        "UPDATE archive_jobs SET host_released_at = coalesce(host_released_at, ?),"
        " host_released_run = ? WHERE id = ? AND attempts = ? AND status = 'running'"
        " AND (host_released_run IS NULL OR host_released_run <= ?)",
        (now, run, job_id, attempt, run),
    )


def rehold_host(conn: sqlite3.Connection, job_id: int, attempt: int, run: int) -> None:
    """A later run of the attempt (the job message was redelivered) started: it talks to the
    host again, so the host counts the job again until that run releases it."""
    conn.execute(
        "UPDATE archive_jobs SET host_released_at = NULL, host_released_run = ?"
        " WHERE id = ? AND attempts = ? AND (host_released_run IS NULL OR host_released_run < ?)",
        (run, job_id, attempt, run),
    )


def heartbeat(
    conn: sqlite3.Connection,
    job_id: int,
    attempt: int,
    now: datetime,
    deadline: timedelta,
    media_deadline: timedelta | None = None,
) -> None:
    """A sign of life of the attempt in flight: its deadline moves on (written at most once
    per half deadline, so a stream of events costs few writes). Media jobs use
    `media_deadline` (their downloads run for hours)."""
    media = media_deadline or deadline
    conn.execute(
        "UPDATE archive_jobs SET deadline = CASE kind WHEN 'media' THEN ?1 ELSE ?2 END"
        " WHERE id = ?3 AND status = 'running' AND attempts = ?4"
        " AND deadline < CASE kind WHEN 'media' THEN ?5 ELSE ?6 END",
        (
            iso(now + media),
            iso(now + deadline),
            job_id,
            attempt,
            iso(now + media / 2),
            iso(now + deadline / 2),
        ),
    )


def fail_retry(
    conn: sqlite3.Connection,
    job_id: int,
    not_before: datetime,
    error: str,
    hooks: str | None,
    *,
    every_hook: bool = False,
) -> None:
    """running -> queued for a later attempt; `hooks` (JSON list) narrows it to those hooks,
    `every_hook` has it run them all again (an earlier narrowing forgotten)."""
    JOB_OUTCOMES.labels("retry").inc()
    conn.execute(
        "UPDATE archive_jobs SET status = 'queued', not_before = ?, last_error = ?,"
        " retry_hooks = CASE WHEN ? THEN NULL ELSE coalesce(?, retry_hooks) END,"
        " deadline = NULL, published_at = NULL WHERE id = ?",
        (iso(not_before), error, every_hook, hooks, job_id),
    )


def succeed(conn: sqlite3.Connection, job_id: int, link_id: int, now: str) -> None:
    """The job succeeded: snapshot sealed, the link counts as archived now (capture jobs)."""
    JOB_OUTCOMES.labels("succeeded").inc()
    _finish(conn, job_id, "succeeded", None, now)
    if _kind(conn, job_id) == "capture":
        linkstore.archived(conn, link_id, now)


def fail_permanent(
    conn: sqlite3.Connection, job_id: int, link_id: int, error: str | None, now: str
) -> None:
    """The job failed for good: snapshot sealed, the link failed unless archived before
    (capture jobs)."""
    JOB_OUTCOMES.labels("failed").inc()
    _finish(conn, job_id, "failed", error, now)
    if _kind(conn, job_id) == "capture":
        linkstore.set_status(conn, link_id, "failed")


def _kind(conn: sqlite3.Connection, job_id: int) -> str:
    row = conn.execute("SELECT kind FROM archive_jobs WHERE id = ?", (job_id,)).fetchone()
    return "capture" if row is None else str(row[0])


def _finish(
    conn: sqlite3.Connection, job_id: int, status: str, error: str | None, now: str
) -> None:
    conn.execute(
        "UPDATE archive_jobs SET status = ?, finished_at = ?, last_error = ?, deadline = NULL"
        " WHERE id = ?",
        (status, now, error, job_id),
    )
    conn.execute(
        "UPDATE snapshots SET status = 'sealed', updated_at = ?"
        " WHERE id = (SELECT snapshot_id FROM archive_jobs WHERE id = ?)",
        (now, job_id),
    )


def requeue_hooks(conn: sqlite3.Connection, snapshot_id: str, hooks: str, now: str) -> int:
    """A finished job queued again, due now, to run only `hooks` (JSON list). Returns 1 if it
    was re-queued, 0 if it is queued or running already."""
    cur = conn.execute(
        "UPDATE archive_jobs SET status = 'queued', not_before = ?, retry_hooks = ?,"
        " deadline = NULL, published_at = NULL"
        " WHERE snapshot_id = ? AND status NOT IN ('queued', 'running')"
        " AND link_id NOT IN (SELECT id FROM links WHERE taken_down_at IS NOT NULL)",
        (now, hooks, snapshot_id),
    )
    return cur.rowcount


def move_to_link(conn: sqlite3.Connection, loser: int, survivor: int) -> None:
    """Dedup merged link `loser` into `survivor`: its jobs and snapshots follow."""
    conn.execute("UPDATE archive_jobs SET link_id = ? WHERE link_id = ?", (survivor, loser))
    conn.execute("UPDATE snapshots SET link_id = ? WHERE link_id = ?", (survivor, loser))


# -- snapshots ------------------------------------------------------------------------------


def _create_snapshot(conn: sqlite3.Connection, job_id: int, now: str) -> str:
    """Give a job its snapshot (at its first dispatch); returns the snapshot id."""
    snapshot_id = new_snapshot_id()
    conn.execute("UPDATE archive_jobs SET snapshot_id = ? WHERE id = ?", (snapshot_id, job_id))
    conn.execute(
        "INSERT INTO snapshots (id, link_id, job_id, status, url, created_at, updated_at)"
        " SELECT ?, l.id, j.id, 'queued', l.canonical_url, ?, ? FROM archive_jobs j"
        " JOIN links l ON l.id = j.link_id WHERE j.id = ?",
        (snapshot_id, now, now, job_id),
    )
    return snapshot_id


def adopt_snapshot(
    conn: sqlite3.Connection, snapshot_id: str, job_id: int, link_id: int, now: str
) -> None:
    """An event names a snapshot this database never made (a restore from an older backup):
    record it as started, on its job if that job exists."""
    conn.execute(
        "INSERT INTO snapshots (id, link_id, job_id, status, url, created_at, updated_at)"
        " SELECT ?, id, (SELECT id FROM archive_jobs WHERE id = ?), 'started', canonical_url,"
        " ?, ? FROM links WHERE id = ?",
        (snapshot_id, job_id, now, now, link_id),
    )


def start(conn: sqlite3.Connection, snapshot_id: str, now: str) -> None:
    """queued -> started: its first hook started."""
    conn.execute(
        "UPDATE snapshots SET status = 'started', updated_at = ?"
        " WHERE id = ? AND status = 'queued'",
        (now, snapshot_id),
    )


def attempt_outcome(conn: sqlite3.Connection, snapshot_id: str, outcome: str, now: str) -> None:
    """An attempt ended: what the snapshot holds now (succeeded, partial or failed)."""
    conn.execute(
        "UPDATE snapshots SET outcome = ?, updated_at = ? WHERE id = ?",
        (outcome, now, snapshot_id),
    )


def report_snapshot(
    conn: sqlite3.Connection,
    snapshot_id: str,
    status: str | None,
    title: str | None,
    final_url: str | None,
    now: str,
    *,
    private_session: bool = False,
) -> None:
    """What the hooks' Snapshot record says (status, title, final URL), over what is stored;
    `private_session` marks the capture's session files private for good
    (shared.session_files)."""
    conn.execute(
        "UPDATE snapshots SET status = coalesce(?, status), title = coalesce(?, title),"
        " final_url = coalesce(?, final_url), private_session = max(private_session, ?),"
        " updated_at = ? WHERE id = ?",
        (status, title, final_url, private_session, now, snapshot_id),
    )
