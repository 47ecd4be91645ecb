"""Archive jobs: recording decisions, the link state decisions need, and finishing jobs."""

from __future__ import annotations

import os
import sqlite3
import time

from services.writer import linkstore
from services.writer.clock import parse
from services.writer.job_policy import Decision, LinkState

ACTIVE = ("queued", "running")


def new_snapshot_id() -> str:
    """A UUIDv7 as 32 hex digits: unique, and time-ordered so that inserts append to the
    index instead of landing on random pages."""
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    value = (value & ~(0xF << 76)) | (0x7 << 76)  # version 7
    value = (value & ~(0x3 << 62)) | (0x2 << 62)  # RFC 9562 variant
    return f"{value:032x}"


def create_snapshot(conn: sqlite3.Connection, job_id: int, now: str) -> str:
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


def link_state(conn: sqlite3.Connection, link_id: int) -> LinkState:
    """When the link was last archived, its status, and its queued or running job, if any."""
    row = conn.execute(
        "SELECT last_archived_at, status, (SELECT id FROM archive_jobs WHERE link_id = links.id"
        " AND status IN ('queued', 'running') ORDER BY id LIMIT 1) FROM links WHERE id = ?",
        (link_id,),
    ).fetchone()
    if row is None:
        return LinkState(None, None)
    return LinkState(
        last_archived_at=parse(row[0]) if row[0] else None,
        active_job_id=None if row[2] is None else int(row[2]),
        status=str(row[1]),
    )


def record_decision(
    conn: sqlite3.Connection,
    link_id: int,
    decision: Decision,
    now: str,
    state: LinkState | None = None,
    kind: str = "capture",
) -> int:
    """Insert the job row of a decision (state: the LinkState it was made from). Returns the
    job id. A queued job gets its snapshot when it is first dispatched."""
    if decision.status != "queued":
        cur = conn.execute(
            "INSERT INTO archive_jobs (link_id, kind, status, reason, priority, enqueued_at,"
            " finished_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (link_id, kind, decision.status, decision.reason, decision.priority, now, now),
        )
        if decision.status == "skipped_policy" and (state is None or state.status == "pending"):
            linkstore.set_status(conn, link_id, "skipped")
        return int(cur.lastrowid or 0)
    cur = conn.execute(
        "INSERT INTO archive_jobs (link_id, kind, status, reason, priority, enqueued_at,"
        " not_before) VALUES (?, ?, 'queued', ?, ?, ?, ?)",
        (link_id, kind, decision.reason, decision.priority, now, now),
    )
    job_id = int(cur.lastrowid or 0)
    if state is None or state.status in ("skipped", "failed"):
        linkstore.set_status(conn, link_id, "queued")
    return job_id


def finish(
    conn: sqlite3.Connection, job_id: int, link_id: int, ok: bool, error: str | None, now: str
) -> None:
    """A job ends: succeeded (the link counts as archived now) or failed for good."""
    conn.execute(
        "UPDATE archive_jobs SET status = ?, finished_at = ?, last_error = ?, deadline = NULL"
        " WHERE id = ?",
        ("succeeded" if ok else "failed", now, error, job_id),
    )
    conn.execute(
        "UPDATE snapshots SET status = 'sealed', updated_at = ?"
        " WHERE id = (SELECT snapshot_id FROM archive_jobs WHERE id = ?)",
        (now, job_id),
    )
    if ok:
        conn.execute(
            "UPDATE links SET last_archived_at = max(coalesce(last_archived_at, ''), ?)"
            " WHERE id = ?",
            (now, link_id),
        )
        linkstore.set_status(conn, link_id, "archived")
    else:
        linkstore.set_status(conn, link_id, "failed")
