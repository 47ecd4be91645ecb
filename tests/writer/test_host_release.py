"""The host's slot through the real writer process and NATS: with PER_DOMAIN_CONCURRENCY=1
a job that says it is done with its host (`capture.released`) lets the host's next job be
dispatched while it still runs; the same release redelivered changes nothing; a redelivered
run of the job holds the host again until it releases it. The test acts as the worker."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from shared import bus
from shared.hooks.records import ArchiveResultRecord
from shared.messages import CaptureJob
from shared.subjects import ARCHIVER_JOBS
from testkit.live_writer import LiveWriter, publish_all
from testkit.writer_harness import event, occ, post, released

pytestmark = pytest.mark.integration
URLS = ["https://blog.example/1", "https://blog.example/2", "https://blog.example/3"]


async def take_jobs(sub: bus.PullSub, want: int) -> list[CaptureJob]:
    """Fetch dispatched capture jobs (acked at once: this test is the worker) until `want`.
    One subscription serves the whole test: a fetch that returned with fewer messages than
    its batch leaves its pull request open on the server for the rest of its expiry, and a
    job dispatched meanwhile goes to that subscription's inbox. A new subscription for each
    call would leave such a job unseen until the consumer's ack wait."""
    jobs: list[CaptureJob] = []
    for _ in range(20):
        for msg in await bus.fetch(sub, 10, timeout=0.5):
            jobs.append(CaptureJob.model_validate_json(msg.data))
            await msg.ack()
        if len(jobs) >= want:
            break
    return jobs


async def test_a_released_host_lets_its_next_job_go(
    tmp_path: Path, nats_url: str, live_writer: Callable[..., LiveWriter]
) -> None:
    writer = live_writer(
        tmp_path / "data",
        nats_url,
        {"PER_DOMAIN_CONCURRENCY": "1", "WORKER_CONCURRENCY": "4", "ARCHIVE_MODE": "all"},
    )
    writer.start()
    await publish_all(nats_url, [post("g1", *(occ(u) for u in URLS))])
    nc = await bus.connect(nats_url, "test-worker")
    try:
        sub = await bus.pull_subscribe(nc.jetstream(), ARCHIVER_JOBS)
        [first] = await take_jobs(sub, 1)
        assert first.url == URLS[0]

        # done with the host, not with the capture: the next job of the host goes
        await publish_all(nats_url, [released(first)])
        [second] = await take_jobs(sub, 1)
        assert second.url == URLS[1]
        running = "SELECT count(*) FROM archive_jobs WHERE status = 'running'"
        assert writer.query(running) == [(2,)]

        # the first job's message is redelivered (its worker nak'ed): its new run's first
        # record takes the host again; the old release, redelivered, changes nothing
        queued = ArchiveResultRecord(status="queued", plugin="navigate", hook="h.py")
        job1 = {"id": first.job_id, "link_id": first.link_id,
                "snapshot_id": first.snapshot_id, "attempts": first.attempt}  # fmt: skip
        await publish_all(nats_url, [event(job1, 0, queued, run=2), released(first)])
        held = "SELECT host_released_at FROM archive_jobs WHERE id = ?"
        writer.wait_for(lambda: writer.query(held, first.job_id) == [(None,)], 10, "re-held")
        await publish_all(nats_url, [released(second)])
        writer.wait_for(
            lambda: writer.query(held, second.job_id) != [(None,)], 10, "second released"
        )
        third = "SELECT status FROM archive_jobs WHERE link_id = (SELECT id FROM links"
        third += " WHERE canonical_url = ?)"
        assert writer.query(third, URLS[2]) == [("queued",)]

        # run 2 is done with the host: the third job goes
        await publish_all(nats_url, [released(first, run=2)])
        [last] = await take_jobs(sub, 1)
        assert last.url == URLS[2]
    finally:
        await nc.close()
    assert writer.stop() == 0
