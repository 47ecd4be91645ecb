"""Evidence: each capture's manifest, WACZ and verdict (`evidence`) and the timestamp
tokens asked of every authority for its manifest (`evidence_timestamps`); the one module
writing both.

A manifest the writer learns of (EvidenceReport) gets one pending row per authority of
`TSA_URLS`; the scheduler asks for them in timestamp jobs (`job.timestamp`, `plan_timestamps`)
and asks again, with a growing delay, until each is granted, or its authority's answer is
final: `refused` (the authority said no) or `invalid` (its token does not verify), kept with
the reason and not asked again. A job is recorded before it is
published and its next try is set then, so a lost job, a dead worker or an authority that
hangs only delays the token. A new manifest of the same snapshot (a retried attempt)
replaces the old one and its tokens start over; a result about an older manifest is ignored.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from datetime import datetime, timedelta

from services.writer import artifacts
from services.writer.clock import iso
from services.writer.context import ApplyContext
from services.writer.db import transaction
from shared.hooks.error_codes import opted_out
from shared.messages import EvidenceReport, TimestampJob, TimestampResult

TIMESTAMP_BACKOFF = (1, 2, 5, 15, 60, 360)
"""Delay before asking an authority again after round n, in TSA_RETRY_SECONDS (the last
repeats: 1 min, 2, 5, 15 min, 1 h, then every 6 h by default)."""
TIMESTAMP_BATCH = 50
"""Manifests' tokens asked for in one scheduler run at most."""


def apply_evidence_report(ctx: ApplyContext, report: EvidenceReport) -> None:
    """A capture's manifest (and WACZ) are stored: remember them with their verdict; a new
    manifest's tokens are pending with every authority."""
    conn = ctx.conn
    old = conn.execute(
        "SELECT attempt, fingerprint FROM evidence WHERE snapshot_id = ?", (report.snapshot_id,)
    ).fetchone()
    if old is not None and old["attempt"] > report.attempt:
        return  # a late report of an earlier attempt
    if _declined(conn, report.snapshot_id):
        return  # a report seen again after the capture was forgotten (forget_snapshot)
    conn.execute(
        "INSERT INTO evidence (snapshot_id, link_id, attempt, manifest_key, fingerprint,"
        " wacz_key, verdict, verdict_detail, checked_at, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (snapshot_id) DO UPDATE SET"
        " attempt = excluded.attempt, manifest_key = excluded.manifest_key,"
        " fingerprint = excluded.fingerprint, wacz_key = excluded.wacz_key,"
        " verdict = excluded.verdict, verdict_detail = excluded.verdict_detail,"
        " checked_at = excluded.checked_at, updated_at = excluded.updated_at",
        (
            report.snapshot_id, _link_of(conn, report.snapshot_id, report.link_id),
            report.attempt, report.manifest_key, report.fingerprint, report.wacz_key,
            report.verdict, report.detail, iso(report.checked_at), ctx.now_iso, ctx.now_iso,
        ),
    )  # fmt: skip
    if old is not None and old["fingerprint"] == report.fingerprint:
        return
    conn.execute("DELETE FROM evidence_timestamps WHERE snapshot_id = ?", (report.snapshot_id,))
    conn.executemany(
        "INSERT INTO evidence_timestamps (snapshot_id, authority, fingerprint, status,"
        " next_try_at, updated_at) VALUES (?, ?, ?, 'pending', ?, ?)",
        [
            (report.snapshot_id, a, report.fingerprint, ctx.now_iso, ctx.now_iso)
            for a in dict.fromkeys(ctx.policy.timestamp_authorities)
        ],
    )


def _declined(conn: sqlite3.Connection, snapshot_id: str) -> bool:
    """Whether a hook of the snapshot found that the page asks not to be archived."""
    codes = conn.execute(
        "SELECT DISTINCT error_code FROM archive_results"
        " WHERE snapshot_id = ? AND error_code IS NOT NULL",
        (snapshot_id,),
    )
    return any(opted_out(code) for (code,) in codes)


def _link_of(conn: sqlite3.Connection, snapshot_id: str, reported: int) -> int:
    """The snapshot's link now (a dedup merge may have moved it since the job left)."""
    row = conn.execute("SELECT link_id FROM snapshots WHERE id = ?", (snapshot_id,)).fetchone()
    return int(row[0]) if row is not None else reported


def apply_timestamp_result(ctx: ApplyContext, result: TimestampResult) -> None:
    """What a timestamp job got: granted tokens (and their files), errors of the others (a
    final one ends the asking). A result about another manifest is ignored; one saying the
    stored manifest is not the recorded one marks the evidence a mismatch."""
    conn = ctx.conn
    row = conn.execute(
        "SELECT link_id, fingerprint FROM evidence WHERE snapshot_id = ?", (result.snapshot_id,)
    ).fetchone()
    if row is None or row["fingerprint"] != result.fingerprint:
        return
    link_id = int(row["link_id"])
    for o in result.outcomes:
        for rec in (o.token, o.chain):
            if rec is not None:
                artifacts.record(conn, link_id, result.snapshot_id, rec, ctx.now_iso)
        if o.granted and o.token is not None:
            conn.execute(
                "UPDATE evidence_timestamps SET status = 'granted', granted_time = ?,"
                " token_key = ?, chain_key = ?, next_try_at = NULL, last_error = NULL,"
                " updated_at = ? WHERE snapshot_id = ? AND authority = ? AND fingerprint = ?",
                (
                    iso(o.time) if o.time else None, o.token.s3_key,
                    o.chain.s3_key if o.chain else None, ctx.now_iso, result.snapshot_id,
                    o.authority, result.fingerprint,
                ),
            )  # fmt: skip
        else:
            conn.execute(
                "UPDATE evidence_timestamps SET status = coalesce(?, status), last_error = ?,"
                " next_try_at = CASE WHEN ? IS NULL THEN next_try_at END, updated_at = ?"
                " WHERE snapshot_id = ? AND authority = ? AND status = 'pending'",
                (
                    o.final, (o.error or "no token")[:500], o.final, ctx.now_iso,
                    result.snapshot_id, o.authority,
                ),
            )  # fmt: skip
    if result.verdict == "mismatch":
        conn.execute(
            "UPDATE evidence SET verdict = ?, verdict_detail = ?, checked_at = ?, updated_at = ?"
            " WHERE snapshot_id = ?",
            (result.verdict, result.detail, iso(result.checked_at), ctx.now_iso,
             result.snapshot_id),
        )  # fmt: skip


def backoff(rounds: int, base: timedelta) -> timedelta:
    """Delay before the next request after `rounds` requests."""
    return base * TIMESTAMP_BACKOFF[min(max(rounds, 1), len(TIMESTAMP_BACKOFF)) - 1]


def plan_timestamps(
    conn: sqlite3.Connection,
    now: datetime,
    base: timedelta = timedelta(minutes=1),
    limit: int = TIMESTAMP_BATCH,
) -> list[TimestampJob]:
    """Record this run's timestamp jobs (each pending authority's next try moves on by its
    backoff) and return them, to publish."""
    with transaction(conn):
        due = conn.execute(
            "SELECT t.snapshot_id, t.authority, t.rounds, e.link_id, e.manifest_key,"
            " e.fingerprint FROM evidence_timestamps t"
            " JOIN evidence e ON e.snapshot_id = t.snapshot_id AND e.fingerprint = t.fingerprint"
            " WHERE t.status = 'pending' AND t.next_try_at <= ?"
            " AND e.link_id NOT IN (SELECT id FROM links WHERE taken_down_at IS NOT NULL)"
            " ORDER BY t.next_try_at",
            (iso(now),),
        ).fetchall()
        by_snapshot: dict[str, list[sqlite3.Row]] = defaultdict(list)
        for r in due:
            if r["snapshot_id"] in by_snapshot or len(by_snapshot) < limit:
                by_snapshot[r["snapshot_id"]].append(r)
        jobs = []
        for snapshot_id, rows in by_snapshot.items():
            rounds = max(int(r["rounds"]) for r in rows) + 1
            for r in rows:
                conn.execute(
                    "UPDATE evidence_timestamps SET rounds = rounds + 1, next_try_at = ?,"
                    " updated_at = ? WHERE snapshot_id = ? AND authority = ?",
                    (iso(now + backoff(int(r["rounds"]) + 1, base)), iso(now), snapshot_id,
                     r["authority"]),
                )  # fmt: skip
            first = rows[0]
            jobs.append(
                TimestampJob(
                    link_id=first["link_id"],
                    snapshot_id=snapshot_id,
                    manifest_key=first["manifest_key"],
                    fingerprint=first["fingerprint"],
                    authorities=[r["authority"] for r in rows],
                    round=rounds,
                )
            )
    return jobs


def move_to_link(conn: sqlite3.Connection, loser: int, survivor: int) -> None:
    """Dedup merged `loser` into `survivor`: its captures' evidence follows."""
    conn.execute("UPDATE evidence SET link_id = ? WHERE link_id = ?", (survivor, loser))


def forget_snapshot(conn: sqlite3.Connection, snapshot_id: str) -> None:
    """A page that asked not to be archived: the capture's evidence goes with its files (a
    fingerprint of files no one keeps proves nothing, and no authority is asked to stamp
    it)."""
    conn.execute("DELETE FROM evidence_timestamps WHERE snapshot_id = ?", (snapshot_id,))
    conn.execute("DELETE FROM evidence WHERE snapshot_id = ?", (snapshot_id,))


def forget(conn: sqlite3.Connection, link_id: int) -> None:
    """A takedown: the link's evidence rows go with its files."""
    conn.execute(
        "DELETE FROM evidence_timestamps WHERE snapshot_id IN"
        " (SELECT snapshot_id FROM evidence WHERE link_id = ?)",
        (link_id,),
    )
    conn.execute("DELETE FROM evidence WHERE link_id = ?", (link_id,))
