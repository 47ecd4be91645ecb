"""An admin's decisions: takedown (and its undo), exclude a domain, retry failed links — each
audited.

- Takedown: the link is marked ``taken_down_at`` and so hidden at once from every page, API,
  search, feed, export and the published database (they all read ``public()``); its queued
  or running job fails for good; late capture events of it are dropped (`is_taken_down`);
  `transitions.link_state` reports it blocked, so no decision ever queues it again, whatever
  the source. Every form of its URL is tombstoned (``tombstones.py``), so a database restored
  from a backup, which has no row of the link, still makes the URL's new link born taken
  down. What was captured of it (rows and S3 objects) is *kept* for ``Policy.takedown_undo``
  (TAKEDOWN_UNDO_DAYS) in ``takedown_holds``, then purged (`purge_due`, from the writer's
  housekeeping): artifacts, metadata, search text, posts, evidence, ... deleted, the S3
  objects queued in ``s3_removals`` for the housekeeping to delete (or quarantine). A window
  of 0 purges within the takedown's transaction.
- Undo (`apply_undo`): before ``purge_after``, the link is shown again exactly as it was
  (nothing was deleted); its tombstones go. After it, refused and audited as such.
- Exclude: the domain (and its subdomains) joins ``excluded_domains``; queued jobs of it
  fail for good; `transitions.link_state` reports its links blocked from then on.
- Include (`apply_include`): the domain leaves ``excluded_domains``; its links are captured
  again from then on, when posted, submitted or retried. What the exclusion failed stays
  failed (nothing is queued by the lift itself: ``cmd.retry`` of the domain does that).
- Retry: failed links (of a domain, failed since a time) not blocked and idle get a job.

The audit row (``admin_audit``) records what, when, why and the admin token's *name* (the
purge at the end of a window is recorded too, by ``writer``).
"""

from __future__ import annotations

import json
import logging
import sqlite3
from datetime import datetime

from services.writer import (
    artifacts,
    evidence_store,
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
from shared.hooks.error_codes import opted_out
from shared.messages import (
    ExcludeCommand,
    IncludeCommand,
    RetryCommand,
    TakedownCommand,
    UndoTakedownCommand,
)
from shared.takedown_undo import undo_refusal

log = logging.getLogger(__name__)

TAKEN_DOWN = "taken down"
PURGER = "writer"
"""Who the audit names for a purge at the end of an undo window."""
AdminCommand = (
    TakedownCommand | ExcludeCommand | IncludeCommand | RetryCommand | UndoTakedownCommand
)


def _audited(ctx: ApplyContext, request_id: str) -> bool:
    row = ctx.conn.execute("SELECT 1 FROM admin_audit WHERE request_id = ?", (request_id,))
    return row.fetchone() is not None


def _audit(
    ctx: ApplyContext,
    action: str,
    cmd: AdminCommand,
    target: str,
    reason: str,
    outcome: str,
    detail: str = "",
) -> None:
    log.info("%s %s by %s: %s %s", action, target, cmd.admin, outcome, detail)
    audit_row(
        ctx.conn,
        (action, target, reason, cmd.admin, cmd.request_id, iso(cmd.requested_at)),
        ctx.now_iso,
        outcome,
        detail,
    )


def audit_row(
    conn: sqlite3.Connection,
    what: tuple[str, str, str, str, str, str],
    at: str,
    outcome: str,
    detail: str,
) -> None:
    """One audit line: (action, target, reason, admin, request_id, requested_at), when it was
    applied, its outcome and detail (a request id already audited is not audited again)."""
    conn.execute(
        "INSERT INTO admin_audit (action, target, reason, admin, request_id, requested_at, at,"
        " outcome, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (request_id) DO NOTHING",
        (*what, at, outcome, detail),
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
    asked not to be archived). A taken-down link whose undo window is open is not among them:
    its objects are kept until its purge."""
    rows = conn.execute(
        "SELECT r.link_id, r.keys, l.taken_down_at IS NOT NULL OR l.id IS NULL"
        " FROM s3_removals r LEFT JOIN links l ON l.id = r.link_id"
        " WHERE r.link_id NOT IN (SELECT link_id FROM takedown_holds)"  # kept for an undo
        " ORDER BY r.link_id LIMIT ?",
        (limit,),
    )
    return [(int(r[0]), str(r[1]), bool(r[2])) for r in rows]


def removal_done(conn: sqlite3.Connection, link_id: int, keys: str) -> None:
    """Forget a row whose objects are gone (unless a late key changed it meanwhile)."""
    with transaction(conn):
        conn.execute("DELETE FROM s3_removals WHERE link_id = ? AND keys = ?", (link_id, keys))


def apply_takedown(ctx: ApplyContext, cmd: TakedownCommand) -> None:
    """Hide the link at once, keep what was captured of it until the undo window ends, audit
    the decision."""
    if _audited(ctx, cmd.request_id):
        return
    row = ctx.conn.execute(
        "SELECT id, canonical_url, taken_down_at FROM links WHERE id = ?", (cmd.link_id,)
    ).fetchone()
    if row is None:
        _audit(ctx, "takedown", cmd, f"link {cmd.link_id}", cmd.reason, "rejected", "unknown link")
        return
    link_id, url = int(row[0]), str(row[1])
    purge_after = take_down(ctx, link_id, cmd.request_id)
    kept = (
        f"objects kept until {purge_after} (undo until then)"
        if purge_after is not None
        else "purged at once (TAKEDOWN_UNDO_DAYS=0)"
    )
    again = " (again)" if row[2] is not None else ""
    _audit(ctx, "takedown", cmd, f"link {link_id}", cmd.reason, "done" + again, f"{url}; {kept}")


def take_down(ctx: ApplyContext, link_id: int, request_id: str | None = None) -> str | None:
    """Take the link down: hidden at once, its queued or running jobs fail for good, and
    every form of its URL is tombstoned (so a restored backup still knows it). An admin's
    takedown (its request id) keeps what was captured until the undo window ends (returned;
    an earlier takedown's window stays); an automatic one (the link's URL was taken down
    before) or a window of 0 purges it now (None)."""
    conn = ctx.conn
    for (job_id,) in conn.execute(
        "SELECT id FROM archive_jobs WHERE link_id = ? AND status IN ('queued', 'running')",
        (link_id,),
    ).fetchall():
        transitions.fail_permanent(conn, job_id, link_id, TAKEN_DOWN, ctx.now_iso)
    linkstore.take_down(conn, link_id, ctx.now_iso)
    tombstones.bury(conn, ctx.policy.takedown_key, link_id, ctx.now_iso)
    if request_id is None or ctx.policy.takedown_undo.total_seconds() <= 0:
        purge(conn, link_id, ctx.now_iso)
        return None
    conn.execute(
        "INSERT INTO takedown_holds (link_id, request_id, taken_down_at, purge_after)"
        " VALUES (?, ?, ?, ?) ON CONFLICT (link_id) DO NOTHING",
        (link_id, request_id, ctx.now_iso, iso(ctx.now + ctx.policy.takedown_undo)),
    )
    row = conn.execute("SELECT purge_after FROM takedown_holds WHERE link_id = ?", (link_id,))
    return str(row.fetchone()[0])


def purge(conn: sqlite3.Connection, link_id: int, now: str) -> int:
    """Delete what was captured of a taken-down link: artifacts, metadata, search text,
    posts, evidence, submissions, older texts, the liveness schedule; its S3 objects queued
    for removal (its whole prefix). Returns how many artifacts went."""
    conn.execute("DELETE FROM takedown_holds WHERE link_id = ?", (link_id,))
    keys = artifacts.remove_for_link(conn, link_id)
    remove_objects(conn, link_id, keys, now)
    linkstore.forget_captured(conn, link_id)
    posts.forget(conn, link_id)
    evidence_store.forget(conn, link_id)
    external_archives.forget(conn, link_id)
    text_history.forget(conn, link_id)
    liveness.forget(conn, link_id)
    return len(keys)


def purge_due(conn: sqlite3.Connection, now: datetime) -> list[int]:
    """Purge every taken-down link whose undo window ended by `now` (the writer's
    housekeeping calls it; tests give the time), each audited; returns their ids."""
    at = iso(now)
    with transaction(conn):
        due = conn.execute(
            "SELECT link_id, request_id, taken_down_at, purge_after FROM takedown_holds"
            " WHERE purge_after <= ? ORDER BY purge_after LIMIT 100",
            (at,),
        ).fetchall()
        for link_id, request_id, taken_down_at, purge_after in due:
            removed = purge(conn, int(link_id), at)
            what = (
                "purge",
                f"link {link_id}",
                "the undo window ended",
                PURGER,
                f"purge:{link_id}:{taken_down_at}",
                str(purge_after),
            )
            detail = f"{removed} artifact(s) and the link's objects removed"
            if request_id:
                detail += f" (takedown {request_id})"
            audit_row(conn, what, at, "done", detail)
            log.info("taken-down link %d purged: its undo window ended", link_id)
    return [int(r[0]) for r in due]


def apply_undo(ctx: ApplyContext, cmd: UndoTakedownCommand) -> None:
    """Show a taken-down link again exactly as before, within its undo window; audited
    (a refusal too, with its reason)."""
    if _audited(ctx, cmd.request_id):
        return
    conn, target = ctx.conn, f"link {cmd.link_id}"
    refusal = undo_refusal(conn, cmd.link_id, ctx.now)  # (the console asks it first too)
    if refusal is not None:
        _audit(ctx, "undo", cmd, target, cmd.reason, "rejected", refusal)
        return
    tombstones.unbury(conn, ctx.policy.takedown_key, cmd.link_id)
    conn.execute("DELETE FROM takedown_holds WHERE link_id = ?", (cmd.link_id,))
    linkstore.undo_take_down(conn, cmd.link_id)
    url = conn.execute("SELECT canonical_url FROM links WHERE id = ?", (cmd.link_id,)).fetchone()
    _audit(ctx, "undo", cmd, target, cmd.reason, "done", f"{url[0]}; shown again")


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


def apply_include(ctx: ApplyContext, cmd: IncludeCommand) -> None:
    """Lift the exclusion of the domain from now on; audited (a domain not excluded by an
    admin is refused, with what still excludes it, if anything)."""
    if _audited(ctx, cmd.request_id):
        return
    conn = ctx.conn
    lifted = conn.execute("DELETE FROM excluded_domains WHERE domain = ?", (cmd.domain,))
    if lifted.rowcount == 0:
        _audit(ctx, "include", cmd, cmd.domain, cmd.reason, "rejected", "not excluded")
        return
    still = transitions.excluded_by(conn, cmd.domain)
    detail = "links captured again from now on (`dla retry --domain` queues the failed ones)"
    if still is not None:
        detail = f"lifted, but {still} is still excluded (it covers {cmd.domain})"
    _audit(ctx, "include", cmd, cmd.domain, cmd.reason, "done", detail)


def apply_retry(ctx: ApplyContext, cmd: RetryCommand) -> None:
    """A new job for every failed link that matches, is not blocked and has none running
    (one whose queued retry still waits for its time is made due now); not one whose page
    asked not to be archived (a decline, not a failure: `dla rearchive` asks it again)."""
    if _audited(ctx, cmd.request_id):
        return
    conn = ctx.conn
    sql = "SELECT id, last_error_code FROM links WHERE status = 'failed' AND taken_down_at IS NULL"
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
    for link_id, code in conn.execute(sql, args).fetchall():
        if opted_out(code):
            continue
        state = transitions.link_state(conn, link_id)
        waiting = state.active_job_due is not None and state.active_job_due > ctx.now
        if state.blocked or (state.active_job_id is not None and not waiting):
            continue
        code = "hastened" if waiting else "allowed"
        decision = Decision("queued", f"retry requested by {cmd.admin}", MANUAL_PRIORITY, code=code)
        media.capture_decided(conn, link_id, decision, ctx.policy, ctx.now_iso, state)
        queued += 1
    target = cmd.domain or "all domains"
    if cmd.since:
        target += f" since {iso(cmd.since)}"
    _audit(ctx, "retry", cmd, target, "", "done", f"{queued} link(s) queued")
