"""An admin's decisions: takedown, exclude a domain, retry failed links — each audited.

- Takedown: the link is marked ``taken_down_at``; its queued or running job fails for good;
  its artifacts, metadata and search text are deleted; its S3 objects are queued in
  ``s3_removals`` for the housekeeping to delete (or quarantine); late capture events of it
  are dropped (`is_taken_down`). `transitions.link_state` reports it blocked, so no decision
  ever queues it again, whatever the source. Every form of its URL is tombstoned
  (``tombstones.py``), so a database restored from a backup, which has no row of the link,
  still makes the URL's new link born taken down.
- Exclude: the domain (and its subdomains) joins ``excluded_domains``; queued jobs of it
  fail for good; `transitions.link_state` reports its links blocked from then on.
- Retry: failed links (of a domain, failed since a time) not blocked and idle get a job.

The audit row (``admin_audit``) records what, when, why and the admin token's *name*.
"""

from __future__ import annotations

import json
import logging
import sqlite3

from services.writer import (
    artifacts,
    evidence,
    external_archives,
    linkstore,
    media,
    posts,
    text_history,
    tombstones,
    transitions,
)
from services.writer.clock import iso
from services.writer.context import ApplyContext
from services.writer.db import transaction
from services.writer.job_policy import MANUAL_PRIORITY, Decision
from services.writer.liveness import dispatch as liveness
from shared.messages import ExcludeCommand, RetryCommand, TakedownCommand

log = logging.getLogger(__name__)

TAKEN_DOWN = "taken down"


def _audited(ctx: ApplyContext, request_id: str) -> bool:
    row = ctx.conn.execute("SELECT 1 FROM admin_audit WHERE request_id = ?", (request_id,))
    return row.fetchone() is not None


def _audit(
    ctx: ApplyContext,
    action: str,
    cmd: TakedownCommand | ExcludeCommand | RetryCommand,
    target: str,
    reason: str,
    outcome: str,
    detail: str = "",
) -> None:
    log.info("%s %s by %s: %s %s", action, target, cmd.admin, outcome, detail)
    ctx.conn.execute(
        "INSERT INTO admin_audit (action, target, reason, admin, request_id, requested_at, at,"
        " outcome, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (request_id) DO NOTHING",
        (
            action,
            target,
            reason,
            cmd.admin,
            cmd.request_id,
            iso(cmd.requested_at),
            ctx.now_iso,
            outcome,
            detail,
        ),
    )


def is_taken_down(conn: sqlite3.Connection, link_id: int) -> bool:
    """True when the link was taken down."""
    row = conn.execute("SELECT taken_down_at FROM links WHERE id = ?", (link_id,)).fetchone()
    return row is not None and row[0] is not None


def remove_objects(conn: sqlite3.Connection, link_id: int, keys: list[str], now: str) -> None:
    """Queue S3 objects for deletion: `keys`, and the link's whole prefix once it is taken
    down."""
    row = conn.execute("SELECT keys FROM s3_removals WHERE link_id = ?", (link_id,)).fetchone()
    known = set(json.loads(row[0])) if row else set()
    merged = sorted(known | set(keys))
    conn.execute(
        "INSERT INTO s3_removals (link_id, keys, requested_at) VALUES (?, ?, ?)"
        " ON CONFLICT (link_id) DO UPDATE SET keys = excluded.keys",
        (link_id, json.dumps(merged), now),
    )


def pending_removals(conn: sqlite3.Connection, limit: int = 20) -> list[tuple[int, str, bool]]:
    """Links whose objects are still to remove, with their extra keys (JSON), and whether
    all of the link's objects go (taken down) or only those keys (a capture of a page that
    asked not to be archived)."""
    rows = conn.execute(
        "SELECT r.link_id, r.keys, l.taken_down_at IS NOT NULL OR l.id IS NULL"
        " FROM s3_removals r LEFT JOIN links l ON l.id = r.link_id ORDER BY r.link_id LIMIT ?",
        (limit,),
    )
    return [(int(r[0]), str(r[1]), bool(r[2])) for r in rows]


def removal_done(conn: sqlite3.Connection, link_id: int, keys: str) -> None:
    """Forget a row whose objects are gone (unless a late key changed it meanwhile)."""
    with transaction(conn):
        conn.execute("DELETE FROM s3_removals WHERE link_id = ? AND keys = ?", (link_id, keys))


def apply_takedown(ctx: ApplyContext, cmd: TakedownCommand) -> None:
    """Hide the link for good, delete what was captured of it, audit the decision."""
    if _audited(ctx, cmd.request_id):
        return
    row = ctx.conn.execute(
        "SELECT id, canonical_url, taken_down_at FROM links WHERE id = ?", (cmd.link_id,)
    ).fetchone()
    if row is None:
        _audit(ctx, "takedown", cmd, f"link {cmd.link_id}", cmd.reason, "rejected", "unknown link")
        return
    link_id, url = int(row[0]), str(row[1])
    removed = take_down(ctx, link_id)
    detail = f"{url}; {removed} artifact(s) removed"
    again = " (again)" if row[2] is not None else ""
    _audit(ctx, "takedown", cmd, f"link {link_id}", cmd.reason, "done" + again, detail)


def take_down(ctx: ApplyContext, link_id: int) -> int:
    """Take the link down: its queued or running jobs fail for good, its artifacts, metadata
    and search text go, its S3 objects are queued for removal, and every form of its URL is
    tombstoned (so a restored backup still knows it). Returns how many artifacts went."""
    conn = ctx.conn
    for (job_id,) in conn.execute(
        "SELECT id FROM archive_jobs WHERE link_id = ? AND status IN ('queued', 'running')",
        (link_id,),
    ).fetchall():
        transitions.fail_permanent(conn, job_id, link_id, TAKEN_DOWN, ctx.now_iso)
    keys = artifacts.remove_for_link(conn, link_id)
    remove_objects(conn, link_id, keys, ctx.now_iso)
    linkstore.take_down(conn, link_id, ctx.now_iso)
    posts.forget(conn, link_id)
    evidence.forget(conn, link_id)
    external_archives.forget(conn, link_id)
    text_history.forget(conn, link_id)
    liveness.forget(conn, link_id)
    tombstones.bury(conn, ctx.policy.takedown_key, link_id, ctx.now_iso)
    return len(keys)


def apply_exclude(ctx: ApplyContext, cmd: ExcludeCommand) -> None:
    """Exclude the domain from now on; its queued jobs fail for good."""
    if _audited(ctx, cmd.request_id):
        return
    conn = ctx.conn
    conn.execute(
        "INSERT INTO excluded_domains (domain, reason, admin, created_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (domain) DO UPDATE SET reason = excluded.reason, admin = excluded.admin",
        (cmd.domain, cmd.reason, cmd.admin, ctx.now_iso),
    )
    queued = conn.execute(
        "SELECT j.id, j.link_id FROM archive_jobs j JOIN links l ON l.id = j.link_id"
        " WHERE j.status = 'queued' AND (l.domain = ? OR l.domain LIKE '%.' || ?)",
        (cmd.domain, cmd.domain),
    ).fetchall()
    for job_id, link_id in queued:
        transitions.fail_permanent(
            conn, job_id, link_id, f"domain {cmd.domain} excluded", ctx.now_iso
        )
    dropped = f"{len(queued)} queued job(s) dropped"
    _audit(ctx, "exclude", cmd, cmd.domain, cmd.reason, "done", dropped)


def apply_retry(ctx: ApplyContext, cmd: RetryCommand) -> None:
    """A new job for every failed link that matches, is not blocked and has none running."""
    if _audited(ctx, cmd.request_id):
        return
    conn = ctx.conn
    sql = "SELECT id FROM links WHERE status = 'failed' AND taken_down_at IS NULL"
    args: list[str] = []
    if cmd.domain:
        sql += " AND (domain = ? OR domain LIKE '%.' || ?)"
        args += [cmd.domain, cmd.domain]
    if cmd.since:
        sql += (
            " AND EXISTS (SELECT 1 FROM archive_jobs j WHERE j.link_id = links.id"
            " AND j.status = 'failed' AND j.finished_at >= ?)"
        )
        args.append(iso(cmd.since))
    queued = 0
    for (link_id,) in conn.execute(sql, args).fetchall():
        state = transitions.link_state(conn, link_id)
        if state.blocked or state.active_job_id is not None:
            continue
        decision = Decision("queued", f"retry requested by {cmd.admin}", MANUAL_PRIORITY)
        media.capture_decided(conn, link_id, decision, ctx.policy, ctx.now_iso, state)
        queued += 1
    target = cmd.domain or "all domains"
    if cmd.since:
        target += f" since {iso(cmd.since)}"
    _audit(ctx, "retry", cmd, target, "", "done", f"{queued} link(s) queued")
