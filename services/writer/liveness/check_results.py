"""Applying liveness messages: a check's result (`check.result`) and an operator's request to
check a link now (`cmd.check`).

A result becomes an observation (once: a redelivered result finds its message id applied;
two answers of one second are one observation, the later's), the link's verdict is worked out again
from all its observations (`verdict.py`), and the next check is scheduled (only by the result
of the check out: a late result of a check dispatched again is evidence, nothing more). A
present original whose text changed gets an ordinary capture (`job_policy.decide`,
source `changed`), so every version is kept.
"""

from __future__ import annotations

import logging

from services.writer import linkstore, media, transitions
from services.writer.context import ApplyContext
from services.writer.job_policy import decide
from services.writer.liveness import dispatch, observations, verdicts
from services.writer.liveness.verdict import verdict
from services.writer.metrics import LIVENESS_CHECKS
from shared.messages import CheckCommand, LivenessResult

log = logging.getLogger(__name__)


def apply_check_result(ctx: ApplyContext, result: LivenessResult) -> None:
    """Keep the observation, update the verdict, schedule the next check, capture a change."""
    conn, rules = ctx.conn, ctx.policy.liveness
    link_id = linkstore.resolve_link_id(conn, result.link_id)
    if link_id is None:
        log.info("check of unknown link %d ignored", result.link_id)
        return
    observations.record(conn, link_id, result)
    LIVENESS_CHECKS.labels(result.answer).inc()
    seen = observations.of_link(conn, link_id)
    found = verdict([s.observation() for s in seen], rules.windows)
    verdicts.update(
        conn,
        link_id,
        found,
        newest=(result.answer, result.tombstone),
        changed=bool(result.changed),
        via=result.via,
    )
    in_a_row = 0
    for s in reversed(seen):
        if s.answer != "unknown":
            break
        in_a_row += 1
    dispatch.after_check(conn, link_id, result.seq, rules, found, in_a_row)
    if result.answer == "present" and result.changed:
        _capture_again(ctx, link_id)


def _capture_again(ctx: ApplyContext, link_id: int) -> None:
    """An ordinary capture of a changed original (none while one is queued or running)."""
    state = transitions.link_state(ctx.conn, link_id)
    decision = decide(state, source="changed", now=ctx.now, policy=ctx.policy)
    media.capture_decided(ctx.conn, link_id, decision, ctx.policy, ctx.now_iso, state)
    log.info("link %d changed at source: %s (%s)", link_id, decision.status, decision.reason)


def apply_check_command(ctx: ApplyContext, cmd: CheckCommand) -> None:
    """Check the link at the scheduler's next run (a check of it out already answers)."""
    link_id = linkstore.resolve_link_id(ctx.conn, cmd.link_id)
    if link_id is None:
        log.info("check of unknown link %d requested; ignored", cmd.link_id)
        return
    dispatch.ask_now(ctx.conn, link_id, ctx.now)
