"""A 3-node NATS JetStream cluster, every stream and bucket with 3 replicas (NATS_REPLICAS=3):
the node leading the streams is killed -9 mid-run; nothing is lost and work resumes."""

from __future__ import annotations

import asyncio
import collections
import time
from pathlib import Path

import pytest

from shared import bus
from shared.subjects import STREAMS
from testkit.chaos import Run, accounting, count, fault_env, heavy, record, site
from testkit.nats_cluster import NatsCluster

pytestmark = [pytest.mark.integration, heavy]


async def declare(urls: str) -> None:
    """Wait until the cluster has formed and takes replicated streams."""
    deadline = time.monotonic() + 60
    while True:
        nc = await bus.connect(urls, "test-declare", connect_timeout=30)
        try:
            await bus.ensure_streams(nc.jetstream(), replicas=3)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)
        finally:
            await nc.close()


async def leaders(urls: str) -> dict[str, str]:
    nc = await bus.connect(urls, "test-leaders", connect_timeout=30)
    try:
        js = nc.jetstream()
        out = {}
        for spec in STREAMS:
            info = await js.stream_info(spec.name)
            assert info.config.num_replicas == 3
            out[spec.name] = (info.cluster.leader or "") if info.cluster else ""
        return out
    finally:
        await nc.close()


@pytest.mark.timeout(600)
def test_killing_the_stream_leader_loses_nothing(tmp_path: Path) -> None:
    links = count("CHAOS_CLUSTER_LINKS", 20)
    posts = links // 2
    with NatsCluster(tmp_path / "nats") as cluster, site(links_per_post=2) as s:
        asyncio.run(declare(cluster.url))
        env = fault_env(s, {"NATS_URL": cluster.url, "NATS_REPLICAS": "3"})
        with Run(tmp_path / "data", env) as run:
            s.add_posts(posts // 2)
            assert run.wait(lambda: len(run.query("SELECT id FROM links")) > 0, 120)
            led = asyncio.run(leaders(cluster.url))
            victim = collections.Counter(led.values()).most_common(1)[0][0]
            before = len(run.query("SELECT id FROM archive_artifacts"))
            killed_at = time.monotonic()
            cluster.kill(next(i for i, n in enumerate(cluster.nodes) if n.name == victim))
            s.add_posts(posts - posts // 2)
            resumed = run.wait(
                lambda: len(run.query("SELECT id FROM archive_artifacts")) > before, 120
            )
            resume_s = time.monotonic() - killed_at
            settled = run.wait(lambda: run.settled(links), 300)
            figures = accounting(run, s)
            after = asyncio.run(leaders(cluster.url))
            logs = "" if settled else run.tail_logs()
    record(
        "nats_leader_kill",
        {
            "links": links,
            "killed": victim,
            "streams_it_led": sorted(k for k, v in led.items() if v == victim),
            "new_leaders": after,
            "work_resumed_s": round(resume_s, 1),
            "settled": settled,
            **figures,
        },
    )
    assert resumed and settled, f"{figures}\n{logs}"
    assert victim not in after.values()
    assert all(v == 0 for v in figures["lost"].values()), figures
    assert all(v == 0 for v in figures["duplicated"].values()), figures
