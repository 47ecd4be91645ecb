"""kill -9 of the writer at any moment: after a restart nothing is lost and nothing doubled."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from shared import bus
from testkit.live_writer import publish_all, writer_idle
from testkit.waiting import until
from testkit.writer_harness import occ, post

pytestmark = pytest.mark.integration

N = 4000
SHARED = 50


def posts() -> list:
    """Post i links to its own x.com status and to one of SHARED reddit threads."""
    return [
        post(
            f"guid-{i}",
            occ(f"https://x.com/u/status/{i}"),
            occ(f"https://www.reddit.com/r/x/comments/{i % SHARED}/t/", in_quote=i % 3 == 0),
        )
        for i in range(N)
    ]


async def jobs_published(nats_url: str) -> list[str]:
    nc = await bus.connect(nats_url, "test-jobs")
    try:
        js = nc.jetstream()
        info = await js.stream_info("JOBS")
        ids = []
        for seq in range(info.state.first_seq, info.state.last_seq + 1):
            msg = await js.get_msg("JOBS", seq)
            ids.append(msg.headers["Nats-Msg-Id"] if msg.headers else "")
        return ids
    finally:
        await nc.close()


async def test_kill_9_mid_way_loses_and_doubles_nothing(
    tmp_path: Path, nats_url: str, live_writer
) -> None:
    await publish_all(nats_url, posts())
    env = {"WRITER_BATCH_SIZE": "50", "WRITER_ACK_WAIT_SECONDS": "2"}  # production: 30 s
    writer = live_writer(tmp_path / "data", nats_url, env)
    kills = []
    for fraction in (0.15, 0.4, 0.65):
        writer.start()
        target = int(N * fraction)
        writer.wait_for(lambda t=target: writer.count("processed_messages") >= t, 60, "progress")
        writer.kill9()
        kills.append(writer.count("processed_messages"))
    assert kills[-1] < N, f"the writer finished before the last kill: {kills}"
    writer.start()
    writer.wait_for(lambda: writer.count("processed_messages") == N, 60, "all applied")
    await until(lambda: writer_idle(nats_url), 30, "every message acknowledged")
    await asyncio.sleep(0.5)  # a few scheduler ticks

    assert writer.count("discourse_posts") == N
    assert writer.count("links") == N + SHARED
    assert writer.count("link_occurrences") == 2 * N
    assert writer.count("processed_messages") == N
    # One decision per (post, link): each x.com link queued; each reddit thread queued by its
    # first post and skipped (in flight) by the others.
    assert writer.query("SELECT status, count(*) FROM archive_jobs GROUP BY status") == [
        ("queued", N + SHARED - 2),
        ("running", 2),
        ("skipped_cached", N - SHARED),
    ]
    assert writer.count("snapshots") == 2  # made at first dispatch
    # Dispatches: x.com and reddit.com, one each (PER_DOMAIN_CONCURRENCY=1), each published
    # exactly once whatever the kills.
    running = writer.query("SELECT id FROM archive_jobs WHERE status = 'running' ORDER BY id")
    assert sorted(await jobs_published(nats_url)) == sorted(f"job:{r[0]}:1" for r in running)
    assert writer.stop() == 0
