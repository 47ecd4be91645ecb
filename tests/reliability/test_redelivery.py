"""A job held by a dead worker comes back within its ack wait; a live one keeps its job."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from shared import bus
from shared.messages import CaptureJob
from shared.subjects import ARCHIVER_JOBS, JOB_CAPTURE

pytestmark = pytest.mark.integration

ACK_WAIT = 3.0


def a_job() -> CaptureJob:
    return CaptureJob(
        job_id=1, link_id=1, snapshot_id="s1", url="http://example.com/",
        deadline=datetime.now(UTC) + timedelta(minutes=5),
    )  # fmt: skip


async def test_ack_wait_is_a_setting_and_applies_to_an_existing_consumer(nats_url: str) -> None:
    nc = await bus.connect(nats_url, "test")
    try:
        js = nc.jetstream()
        await bus.ensure_streams(js)
        await bus.pull_subscribe(js, ARCHIVER_JOBS.with_ack_wait(60))
        await bus.pull_subscribe(js, ARCHIVER_JOBS.with_ack_wait(ACK_WAIT))
        info = await js.consumer_info("JOBS", ARCHIVER_JOBS.durable)
        assert info.config.ack_wait == ACK_WAIT
    finally:
        await nc.close()


async def test_a_dead_workers_job_is_redelivered_and_a_live_one_is_not(nats_url: str) -> None:
    spec = ARCHIVER_JOBS.with_ack_wait(ACK_WAIT)
    dead = await bus.connect(nats_url, "dead-worker")
    live = await bus.connect(nats_url, "live-worker")
    try:
        await bus.ensure_streams(dead.jetstream())
        await bus.publish(dead.jetstream(), JOB_CAPTURE, a_job())
        sub = await bus.pull_subscribe(dead.jetstream(), spec)
        (msg,) = await bus.fetch(sub, 1, timeout=2)
        assert msg.metadata.num_delivered == 1
        await dead.close()  # the worker died holding the job (no ack, no nak)

        other = await bus.pull_subscribe(live.jetstream(), spec)
        (again,) = await bus.fetch(other, 1, timeout=ACK_WAIT + 5)
        assert again.metadata.num_delivered == 2, "the job came back after the ack wait"

        # A live worker keeps its job past several ack waits with in-progress acks.
        beat = asyncio.create_task(bus.keep_in_progress(again, ACK_WAIT / 3))
        assert await bus.fetch(other, 1, timeout=3 * ACK_WAIT) == []
        beat.cancel()
        await again.ack_sync()
    finally:
        if not dead.is_closed:
            await dead.close()
        await live.close()
