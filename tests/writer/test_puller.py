"""The batch reader of pull consumers, on a real nats-server."""

from __future__ import annotations

import time

import pytest

from services.writer.puller import Puller
from shared import bus
from shared.subjects import WRITER_FEED
from testkit.live_writer import publish_all
from testkit.writer_harness import post

pytestmark = pytest.mark.integration


async def test_fetch_returns_what_is_there_without_waiting_for_a_full_batch(nats_url: str) -> None:
    await publish_all(nats_url, [post(f"p{i}") for i in range(3)])
    nc = await bus.connect(nats_url, "test-puller")
    try:
        puller = await Puller.create(nc, nc.jetstream(), WRITER_FEED)
        started = time.monotonic()
        msgs = await puller.fetch(500, timeout=5)
        assert len(msgs) == 3 and time.monotonic() - started < 4  # not the 5 s timeout
        for m in msgs:
            await m.ack_sync()
        started = time.monotonic()
        assert await puller.fetch(500, timeout=0.3) == []
        assert 0.2 < time.monotonic() - started < 4  # waited its 0.3 s, then returned
        # A message published while a request waits arrives at once.
        await publish_all(nats_url, [post("late")])
        msgs = await puller.fetch(500, timeout=5)
        assert [m.subject for m in msgs] == ["feed.post"]
        await msgs[0].ack_sync()
        assert await puller.pending() == 0
        # Batches are capped; the rest comes with the next fetch.
        await publish_all(nats_url, [post(f"q{i}") for i in range(25)])
        first, second = await puller.fetch(10, timeout=2), await puller.fetch(100, timeout=2)
        assert len(first) == 10 and len(first) + len(second) >= 11
        await puller.close()
    finally:
        await nc.close()
