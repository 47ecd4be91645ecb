"""The liveness checks a capture worker runs (`job.check`, the `checker` consumer shared by
every archiver): each check to its `LivenessResult` on `check.result`, then acked.

A check has its own slots (`LIVENESS_CONCURRENCY` at once), apart from the snapshots', so a
check never waits behind a capture. A worker that dies mid-check loses nothing: the job is
redelivered after the ack wait (in-progress acks are sent while a check runs); when NATS
cannot take the result, the job is nak'ed with a delay; a result that arrives twice changes
nothing in the writer (its message id is the check's).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from nats.aio.msg import Msg
from nats.js import JetStreamContext

from shared import bus
from shared.capture.metrics import CHECK_SECONDS
from shared.errors import BusError
from shared.liveness.check import Checker
from shared.messages import LivenessCheck, LivenessResult
from shared.subjects import CHECK_RESULT, ConsumerSpec

log = logging.getLogger(__name__)

CHECK_TIMEOUT_S = 300.0
"""A check still running after this long ends `unknown` (each request has its own bounds;
this bounds a chain of several)."""


@dataclass(frozen=True)
class CheckerConfig:
    """How one worker runs checks."""

    consumer: ConsumerSpec
    concurrency: int
    nak_delay_s: float


async def run_one(checker: Checker, job: LivenessCheck) -> LivenessResult:
    """One check, bounded in time: never raises for what the original does."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_S):
            result = await checker.check(job)
    except TimeoutError:
        result = timed_out(checker, job)
    CHECK_SECONDS.labels(result.answer).observe(loop.time() - started)
    return result


def timed_out(checker: Checker, job: LivenessCheck) -> LivenessResult:
    """The result of a check that did not end in time."""
    return LivenessResult(
        link_id=job.link_id,
        seq=job.seq,
        checked_at=datetime.now(UTC),
        answer="unknown",
        via="check",
        reason="timeout",
        words=f"no answer within {CHECK_TIMEOUT_S:g}s",
        worker=checker.env.worker,
    )


async def process(
    cfg: CheckerConfig, js: JetStreamContext, checker: Checker, msg: Msg, job: LivenessCheck
) -> None:
    """Check, publish the result, ack; NATS failing: nak with a delay (redelivered)."""
    heartbeat = asyncio.create_task(bus.keep_in_progress(msg, cfg.consumer.ack_wait_s / 3))
    try:
        result = await run_one(checker, job)
        await bus.publish(js, CHECK_RESULT, result)
        await msg.ack_sync()
        change = "" if result.changed is None else ", changed" if result.changed else ", same"
        status = f" {result.status}" if result.status else ""
        log.info("check %d of link %d: %s (%s%s)%s", job.seq, job.link_id, result.answer,
                 result.reason, status, change)  # fmt: skip
    except BusError as exc:
        log.warning("check %d of link %d: result not sent (%s); retried", job.seq, job.link_id, exc)
        await bus.nak_later(msg, cfg.nak_delay_s)
    except asyncio.CancelledError:  # the worker is stopping: the check goes back at once
        await bus.hand_back(msg)
        raise
    except Exception as exc:  # a bug in a check: the job comes back later, the worker lives on
        log.exception("check %d of link %d failed: %s", job.seq, job.link_id, exc)
        await bus.nak_later(msg, cfg.nak_delay_s)
    finally:
        heartbeat.cancel()


async def run_checker(
    cfg: CheckerConfig, js: JetStreamContext, checker: Checker, stop: asyncio.Event
) -> None:
    """Fetch and run checks until stop is set, at most cfg.concurrency at once; on stop, the
    checks under way are cancelled and handed back (nak)."""
    sub = await bus.pull_subscribe(js, cfg.consumer)
    running: set[asyncio.Task[None]] = set()
    while not stop.is_set():
        free = cfg.concurrency - len(running)
        if free <= 0:
            await asyncio.wait(running, timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
            continue
        for msg in await bus.fetch(sub, free, timeout=1.0):
            job = await bus.accept(msg, LivenessCheck, "check")
            if job is None:
                continue
            task = asyncio.create_task(process(cfg, js, checker, msg, job))
            running.add(task)
            task.add_done_callback(running.discard)
    for task in list(running):
        task.cancel()
    if running:
        await asyncio.wait(running)
