"""Applying CaptureDone: an attempt ended; the job succeeds, is retried later, or fails."""

from __future__ import annotations

import json
import logging

from services.writer import transitions
from services.writer.context import ApplyContext
from services.writer.job_policy import is_permanent
from shared.hooks.retry import retry_delay
from shared.messages import CaptureDone

log = logging.getLogger(__name__)


def apply_capture_done(ctx: ApplyContext, done: CaptureDone) -> None:
    """Finish the job's current attempt; reports of other attempts are ignored."""
    conn = ctx.conn
    job = conn.execute(
        "SELECT id, link_id, snapshot_id, status, attempts FROM archive_jobs WHERE id = ?",
        (done.job_id,),
    ).fetchone()
    if job is None or job["status"] != "running" or job["attempts"] != done.attempt:
        log.info(
            "job %d: ignoring report of attempt %d (job is %s, attempt %s)",
            done.job_id,
            done.attempt,
            None if job is None else job["status"],
            None if job is None else job["attempts"],
        )
        return
    retry = [h for h in done.retry_hooks if not _hook_is_permanent(ctx, job["snapshot_id"], h)]
    if retry or done.error:
        _retry_or_fail(ctx, job["id"], job["link_id"], done, retry)
        return
    ok, error = _outcome(ctx, job["snapshot_id"], done)
    if ok:
        transitions.succeed(conn, job["id"], job["link_id"], ctx.now_iso)
    else:
        transitions.fail_permanent(conn, job["id"], job["link_id"], error, ctx.now_iso)


def _retry_or_fail(
    ctx: ApplyContext, job_id: int, link_id: int, done: CaptureDone, retry: list[str]
) -> None:
    """Schedule the next attempt with backoff, or fail the job when attempts are used up."""
    error = done.error or f"hooks failed: {', '.join(retry)}"
    if done.attempt >= ctx.policy.max_attempts:
        transitions.fail_permanent(
            ctx.conn,
            job_id,
            link_id,
            f"gave up after {done.attempt} attempts: {error}",
            ctx.now_iso,
        )
        return
    delay = retry_delay(done.attempt)
    hooks = json.dumps(sorted(retry)) if retry else None
    transitions.fail_retry(ctx.conn, job_id, ctx.now + delay, error, hooks)


def _hook_is_permanent(ctx: ApplyContext, snapshot_id: str, hook: str) -> bool:
    row = ctx.conn.execute(
        "SELECT error_code, attempts FROM archive_results WHERE snapshot_id = ? AND hook = ?",
        (snapshot_id, hook),
    ).fetchone()
    return row is not None and is_permanent(row["error_code"], int(row["attempts"]))


def _outcome(ctx: ApplyContext, snapshot_id: str, done: CaptureDone) -> tuple[bool, str | None]:
    """Succeeded unless every hook of the snapshot failed (or failed permanently)."""
    rows = ctx.conn.execute(
        "SELECT hook, status, error_code, output_str FROM archive_results WHERE snapshot_id = ?",
        (snapshot_id,),
    ).fetchall()
    if not rows or any(r["status"] == "succeeded" for r in rows):
        return True, None
    failed = [r for r in rows if r["status"] == "failed"]
    if not failed:
        return True, None
    first = failed[0]
    return False, f"{first['hook']}: {first['error_code'] or ''} {first['output_str']}".strip()
