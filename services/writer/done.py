"""Applying what a worker says of a job attempt: HostReleased (it is done talking to the
link's host) and CaptureDone (it ended: the job succeeds, is retried later, or fails)."""

from __future__ import annotations

import json
import logging
import sqlite3
from dataclasses import dataclass
from datetime import datetime

from services.writer import (
    artifacts,
    evidence_store,
    external_archives,
    linkstore,
    media,
    moderation,
    posts,
    transitions,
)
from services.writer.clock import iso, parse
from services.writer.context import ApplyContext
from services.writer.liveness import dispatch as liveness
from shared.hooks.error_codes import final, opted_out, retry_worthy, telling, walled
from shared.hooks.records import KEPT
from shared.hooks.retry import retry_delay
from shared.messages import CaptureDone, HostReleased

log = logging.getLogger(__name__)


def apply_host_released(ctx: ApplyContext, released: HostReleased) -> None:
    """The attempt's job stops counting against its domain's limit (the scheduler's
    PER_DOMAIN_CONCURRENCY); a release of another attempt, or of a finished job, is ignored."""
    transitions.release_host(ctx.conn, released.job_id, released.attempt, released.run, ctx.now_iso)


def apply_capture_done(ctx: ApplyContext, done: CaptureDone) -> None:
    """Finish the job's current attempt; reports of other attempts are ignored."""
    conn = ctx.conn
    job = conn.execute(
        "SELECT id, link_id, snapshot_id, status, attempts, kind FROM archive_jobs WHERE id = ?",
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
    results = _results_by_key(ctx, job["snapshot_id"])
    retry = [
        h for h in done.retry_hooks if h not in results or retry_worthy(results[h]["error_code"])
    ]
    post_plugin = posts.plugin_of(conn, job["snapshot_id"])
    if post_plugin is not None:  # the post was kept: its chain's other steps need no retry
        retry = [h for h in retry if h not in results or results[h]["plugin"] != post_plugin]
    outcome = attempt_outcome(ctx, job["snapshot_id"])
    if outcome.declined:
        forget_declined(ctx, job["link_id"], job["snapshot_id"])
    if final(outcome.error_code) and outcome.hook not in retry:
        # What the attempt found is final (not a web page, a download, too large) and its
        # hook did not ask to try again: the other hooks' retryable failures (the browser
        # timing out on a zip) follow from it, and another attempt would find the same.
        retry = []
    transitions.attempt_outcome(conn, job["snapshot_id"], outcome.outcome, ctx.now_iso)
    retry_at = None
    if outcome.wall and not done.error:
        # only a wall was met: no archive, and the whole capture is tried again on the
        # normal schedule (the operator may add the site's cookies meanwhile)
        retry_at = _retry_or_fail(ctx, job["id"], job["link_id"], done, [], {}, outcome.error)
    elif retry or done.error:
        retry_at = _retry_or_fail(ctx, job["id"], job["link_id"], done, retry, results)
    elif outcome.outcome in KEPT:
        transitions.succeed(conn, job["id"], job["link_id"], ctx.now_iso)
    else:
        transitions.fail_permanent(conn, job["id"], job["link_id"], outcome.error, ctx.now_iso)
    # one line a capture: the trail that tells "the writer never heard" from "it did"
    log.info(
        "job %d (%s, link %d): attempt %d ended %s%s",
        job["id"],
        job["kind"],
        job["link_id"],
        done.attempt,
        "failed" if done.error else outcome.outcome,
        f", tried again at {iso(retry_at)}" if retry_at else "",
    )
    if job["kind"] == "media":
        ok = not (retry or done.error) and outcome.outcome in KEPT
        media.attempt_ended(
            conn, job["id"], job["snapshot_id"], finished=retry_at is None, ok=ok, now=ctx.now_iso
        )
        return
    error = outcome.error or (done.error if retry_at or done.error else None)
    linkstore.attempt_ended(
        conn,
        job["link_id"],
        outcome.outcome if not done.error else "failed",
        outcome.error_code,
        error,
        iso(retry_at) if retry_at else None,
        ctx.now_iso,
    )
    media.capture_ended(
        conn,
        job["link_id"],
        finished=retry_at is None and not outcome.declined,
        policy=ctx.policy,
        now=ctx.now_iso,
    )
    if retry_at is None and not done.error and outcome.outcome in KEPT:
        liveness.watch(conn, job["link_id"], ctx.policy.liveness, ctx.now)
        external_archives.planned(conn, job["link_id"], ctx.policy.external_services, ctx.now_iso)


def forget_declined(ctx: ApplyContext, link_id: int, snapshot_id: str) -> None:
    """The page asked not to be archived: whatever this capture kept before a hook saw it
    (a platform API step's post, its images and WARC, the evidence's manifest and WACZ) is
    forgotten, its S3 objects queued for deletion."""
    posts.forget_snapshot(ctx.conn, link_id, snapshot_id)
    evidence_store.forget_snapshot(ctx.conn, snapshot_id)
    keys = artifacts.remove_for_snapshot(ctx.conn, snapshot_id)
    if keys:
        moderation.remove_objects(ctx.conn, link_id, keys, ctx.now_iso)


def _retry_or_fail(
    ctx: ApplyContext,
    job_id: int,
    link_id: int,
    done: CaptureDone,
    retry: list[str],
    results: dict[str, sqlite3.Row],
    wall: str | None = None,
) -> datetime | None:
    """Schedule the next attempt with backoff (returns when), or fail the job when attempts
    are used up (returns None). `retry` narrows the next attempt to those hooks; `wall` (what
    the attempt met instead of the page) has it run every hook again. `results`: the
    snapshot's hook results by key (`_results_by_key`), whose `retry_at` a site's longer
    Retry-After may have put later than the schedule."""
    error = done.error or wall or f"hooks failed: {', '.join(retry)}"
    if done.attempt >= ctx.policy.max_attempts:
        transitions.fail_permanent(
            ctx.conn,
            job_id,
            link_id,
            f"gave up after {done.attempt} attempts: {error}",
            ctx.now_iso,
        )
        return None
    given = [results[h]["retry_at"] for h in retry if h in results]
    when = max([ctx.now + retry_delay(done.attempt), *(parse(str(t)) for t in given if t)])
    hooks = json.dumps(sorted(retry)) if retry else None
    transitions.fail_retry(ctx.conn, job_id, when, error, hooks, every_hook=bool(wall))
    return when


def _results_by_key(ctx: ApplyContext, snapshot_id: str) -> dict[str, sqlite3.Row]:
    """The snapshot's hook results by the keys a worker names hooks with in `retry_hooks`
    (`<plugin>/<hook file>`, HookSpec.key) and by the hook file alone."""
    rows = ctx.conn.execute(
        "SELECT plugin, hook, error_code, retry_at FROM archive_results WHERE snapshot_id = ?",
        (snapshot_id,),
    ).fetchall()
    by_file = {str(r["hook"]): r for r in rows}
    return by_file | {f"{r['plugin']}/{r['hook']}": r for r in rows}


@dataclass(frozen=True)
class AttemptOutcome:
    """What a snapshot holds after an attempt, from its hooks' latest results."""

    outcome: str
    """succeeded (every hook that ran is fine), partial (something kept, not all),
    failed (nothing kept)."""
    error_code: str | None = None
    """The first failed (else partial) hook's error code, preferring one whose reason says
    what happened (`stalled`, `too_large`, `http_error`...) over a vague one (`timeout`,
    `page_unresponsive`: shared.hooks.error_codes.telling)."""
    error: str | None = None
    """`<hook>: <code> <output>` of that hook."""
    hook: str | None = None
    """That hook."""
    declined: bool = False
    """True when a hook found that the page asks not to be archived (X-No-Archive): the
    attempt keeps nothing, whatever other hooks (a platform's API step, which runs before
    the page is loaded) had kept."""
    wall: bool = False
    """True when the page the attempt kept is a wall (shared.hooks.error_codes.walled) and
    it kept no post: what it kept is evidence of the wall, not an archive, so it counts as
    failed."""


def attempt_outcome(ctx: ApplyContext, snapshot_id: str) -> AttemptOutcome:
    """Succeeded when no hook failed or was partial; partial when some hook kept something
    (succeeded or partial) while another failed or was partial; failed when none kept
    anything but one failed. Skipped hooks do not count either way, nor, when the snapshot
    kept a platform post, the other hooks of the plugin that kept it (an API step that
    failed before the page gave the post) or a wall another hook met (`walled`: the
    browser's login wall is evidence, the post is the archive). Without a post, a hook that
    kept what was served and says it is a wall (`partial` with a wall's code: the navigate
    hook's browser page) makes the attempt failed with that code (`wall`): its captures
    show the wall, not the page. (A step that met a wall and kept nothing, an API step,
    says nothing of what the browser kept.)"""
    rows = ctx.conn.execute(
        "SELECT plugin, hook, status, error_code, output_str FROM archive_results"
        " WHERE snapshot_id = ? ORDER BY id",
        (snapshot_id,),
    ).fetchall()
    opt_out = next((r for r in rows if opted_out(r["error_code"])), None)
    if opt_out is not None:
        error = f"{opt_out['hook']}: {opt_out['error_code']} {opt_out['output_str'] or ''}"
        return AttemptOutcome("failed", opt_out["error_code"], error.strip(), opt_out["hook"],
                              declined=True)  # fmt: skip
    post_plugin = posts.plugin_of(ctx.conn, snapshot_id)
    if post_plugin is not None:
        rows = [r for r in rows if r["plugin"] != post_plugin or r["status"] != "failed"]
        rows = [r for r in rows if not walled(r["error_code"])]
    wall = next((r for r in rows if r["status"] == "partial" and walled(r["error_code"])), None)
    if wall is not None:
        error = f"{wall['hook']}: {wall['error_code']} {wall['output_str'] or ''}".strip()
        return AttemptOutcome("failed", wall["error_code"], error, wall["hook"], wall=True)
    kept = [r for r in rows if r["status"] in KEPT]
    bad = [r for r in rows if r["status"] == "failed"] + [
        r for r in rows if r["status"] == "partial"
    ]
    if not bad:
        return AttemptOutcome("succeeded")
    # the first telling code: a stall the fetch named beats the browser's timeout on it
    first = next((r for r in bad if telling(r["error_code"])), bad[0])
    error = f"{first['hook']}: {first['error_code'] or ''} {first['output_str']}".strip()
    return AttemptOutcome(
        "partial" if kept else "failed", first["error_code"], error, first["hook"]
    )
