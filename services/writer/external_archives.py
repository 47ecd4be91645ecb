"""Submissions to the public archives (`external_archives`): the one module writing them.

A link whose own capture succeeded gets one pending row per service of WAYBACK_SUBMIT and
ARCHIVE_TODAY_SUBMIT (`planned`); the scheduler sends submission jobs (`job.external`,
`plan`), each recorded before it is published with its next try, so a lost job, a dead
worker or a service that hangs only delays it; a job polls the service's job for half that
delay at most (`poll_until`), so its answer is in before the next round. What a job got
(`apply_external_result`): the public snapshot (`archived`, final, from any round); still in
progress (its job polled again after the growing delay); "not now" (429, too many captures:
asked again when the service said, else after the growing delay); refused (`failed`, final,
in the service's words). After MAX_ROUNDS jobs without a snapshot it is `failed` too.
Nothing here touches the link's own capture.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta

from services.writer.clock import iso
from services.writer.context import ApplyContext
from services.writer.db import transaction
from services.writer.evidence_store import backoff
from shared.messages import ExternalArchiveJob, ExternalArchiveResult

BATCH = 50
"""Submission jobs sent in one scheduler run at most."""
MAX_ROUNDS = 30
"""Jobs of one link and service without a snapshot before it is given up (`failed`)."""


def planned(conn: sqlite3.Connection, link_id: int, services: tuple[str, ...], now: str) -> None:
    """The link's own capture succeeded: submit it to every service it is not yet (or no
    longer pending) with; one archived or refused before is left as it is."""
    row = conn.execute(
        "SELECT coalesce(final_url, canonical_url) FROM links WHERE id = ?", (link_id,)
    ).fetchone()
    if row is None:
        return
    conn.executemany(
        "INSERT INTO external_archives (link_id, service, url, status, next_try_at, updated_at)"
        " VALUES (?, ?, ?, 'pending', ?, ?) ON CONFLICT (link_id, service) DO NOTHING",
        [(link_id, s, row[0], now, now) for s in services],
    )


def apply_external_result(ctx: ApplyContext, result: ExternalArchiveResult) -> None:
    """What a submission job got. A snapshot is taken from any round; any other answer only
    from the row's current round (a late one of an earlier round is ignored)."""
    conn, now, answer = ctx.conn, ctx.now, result.answer
    row = conn.execute(
        "SELECT status, rounds FROM external_archives WHERE link_id = ? AND service = ?",
        (result.link_id, result.service),
    ).fetchone()
    if row is None or row["status"] != "pending":
        return
    if answer.outcome != "archived" and row["rounds"] != result.round:
        return
    if answer.outcome == "archived":
        conn.execute(
            "UPDATE external_archives SET status = 'archived', snapshot_url = ?,"
            " captured_at = ?, job_ref = NULL, next_try_at = NULL, last_error = NULL,"
            " updated_at = ? WHERE link_id = ? AND service = ?",
            (answer.snapshot_url, iso(answer.captured_at or result.checked_at), ctx.now_iso,
             result.link_id, result.service),
        )  # fmt: skip
        return
    error = (answer.error or "no snapshot")[:500]
    if answer.outcome == "failed" or result.round >= MAX_ROUNDS:
        if answer.outcome != "failed":
            error = f"{error}; given up after {result.round} tries"
        conn.execute(
            "UPDATE external_archives SET status = 'failed', last_error = ?, job_ref = NULL,"
            " next_try_at = NULL, updated_at = ? WHERE link_id = ? AND service = ?",
            (error, ctx.now_iso, result.link_id, result.service),
        )
        return
    after = backoff(result.round, ctx.policy.external_retry)
    if answer.retry_after_s is not None:
        after = timedelta(seconds=answer.retry_after_s)
    conn.execute(
        "UPDATE external_archives SET job_ref = ?, last_error = ?, next_try_at = ?,"
        " updated_at = ? WHERE link_id = ? AND service = ?",
        (answer.job_ref, None if answer.outcome == "pending" else error, iso(now + after),
         ctx.now_iso, result.link_id, result.service),
    )  # fmt: skip


def plan(
    conn: sqlite3.Connection, now: datetime, base: timedelta, limit: int = BATCH
) -> list[ExternalArchiveJob]:
    """Record this run's submission jobs (each one's next try moves on by its backoff, in
    case the job is lost) and return them, to publish."""
    with transaction(conn):
        due = conn.execute(
            "SELECT link_id, service, url, rounds, job_ref FROM external_archives"
            " WHERE status = 'pending' AND next_try_at <= ?"
            " AND link_id NOT IN (SELECT id FROM links WHERE taken_down_at IS NOT NULL)"
            " ORDER BY next_try_at LIMIT ?",
            (iso(now), limit),
        ).fetchall()
        jobs = []
        for r in due:
            rounds = int(r["rounds"]) + 1
            wait = backoff(rounds, base)
            conn.execute(
                "UPDATE external_archives SET rounds = ?, next_try_at = ?, updated_at = ?"
                " WHERE link_id = ? AND service = ?",
                (rounds, iso(now + wait), iso(now), r["link_id"], r["service"]),
            )
            jobs.append(
                ExternalArchiveJob(
                    link_id=r["link_id"],
                    service=r["service"],
                    url=r["url"],
                    job_ref=r["job_ref"],
                    round=rounds,
                    poll_until=now + wait / 2,
                )
            )
    return jobs


def move_to_link(conn: sqlite3.Connection, loser: int, survivor: int) -> None:
    """Dedup merged `loser` into `survivor`: its submissions follow, unless the survivor
    has its own with that service."""
    conn.execute(
        "UPDATE OR IGNORE external_archives SET link_id = ? WHERE link_id = ?", (survivor, loser)
    )
    forget(conn, loser)


def forget(conn: sqlite3.Connection, link_id: int) -> None:
    """A takedown: the link's submissions are forgotten (the public snapshots are not ours
    to remove)."""
    conn.execute("DELETE FROM external_archives WHERE link_id = ?", (link_id,))
