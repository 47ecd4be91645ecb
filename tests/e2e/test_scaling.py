"""Two archiver processes share one 3-node NATS cluster (streams R3) and hold per-domain limits.

This is the many-machines layout of docs/operations.md on one host: every node, worker and
fixture site is a real process on 127.0.0.x; each archiver has its own data (scratch) dir.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import httpx
import pytest

from services.supervisor.children import Child, free_ports
from services.supervisor.stack import Stack
from shared import bus
from shared.subjects import STREAMS
from testkit.forum import Post, posts_rss
from testkit.httpserver import FixtureServer, Reply
from testkit.nats_cluster import NatsCluster
from testkit.stack_env import ENGINES_GRACE_S, own_engines_env
from testkit.stack_report import database_counts, log_tails

pytestmark = pytest.mark.integration

PAGES_PER_HOST = 5
PAGE_SECONDS = 0.4


class InFlight:
    """Counts concurrent requests per host at the fixture sites."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()

    def page(self, host: str, n: int):  # type: ignore[no-untyped-def]
        def reply(_: BaseHTTPRequestHandler) -> Reply:
            with self.lock:
                self.now[host] += 1
                self.peak[host] = max(self.peak[host], self.now[host])
            try:
                time.sleep(PAGE_SECONDS)
                body = f"<html><head><title>{host} page {n}</title></head><body>x</body></html>"
                return Reply(body.encode(), headers={"Content-Type": "text/html"})
            finally:
                with self.lock:
                    self.now[host] -= 1

        return reply


@pytest.fixture
def sites() -> Iterator[tuple[FixtureServer, FixtureServer]]:
    with FixtureServer("127.0.0.2") as a, FixtureServer("127.0.0.3") as b:
        yield a, b


async def stream_replicas(url: str) -> dict[str, int]:
    nc = await bus.connect(url, "scaling-test", connect_timeout=10)
    try:
        js = nc.jetstream()
        return {s.name: (await js.stream_info(s.name)).config.num_replicas or 1 for s in STREAMS}
    finally:
        await nc.close()


def test_two_archivers_share_one_cluster(
    tmp_path: Path, sites: tuple[FixtureServer, FixtureServer]
) -> None:
    counts = InFlight()
    links = []
    for site in sites:
        for n in range(PAGES_PER_HOST):
            site.routes[f"/p{n}.html"] = counts.page(site.host, n)
            links.append(f"{site.base}/p{n}.html")
    posts = [Post(i + 1, i + 1, f'<p><a href="{url}">page</a></p>') for i, url in enumerate(links)]

    with FixtureServer("127.0.0.1") as forum, NatsCluster(tmp_path / "nats") as cluster:
        forum.routes["/posts.rss"] = Reply(
            posts_rss(forum.base, posts), headers={"Content-Type": "application/rss+xml"}
        )
        base_env = own_engines_env()
        base_env.update(
            NATS_URL=cluster.url,
            NATS_REPLICAS="3",
            RSS_URL=f"{forum.base}/posts.rss",
            POLL_INTERVAL_SECONDS="0.5",
            ALLOW_PRIVATE_TARGETS="true",
            ARCHIVE_MODE="all",
            WORKER_CONCURRENCY="4",
            PER_DOMAIN_CONCURRENCY="1",
            ARCHIVER_CONCURRENCY="2",
            MEDIA_CONCURRENCY="1",
        )
        stack = Stack(data_dir=tmp_path / "api", env=base_env, services=("writer", "poller"))
        workers: list[Child] = []
        try:
            stack.start_engines()
            assert asyncio.run(stream_replicas(cluster.url)) == {s.name: 3 for s in STREAMS}
            stack.start_services()
            for name, port in zip(("a", "b"), free_ports(2), strict=True):
                env = dict(stack.env, DATA_DIR=str(tmp_path / f"worker-{name}"))
                env["METRICS_PORT"] = str(port)
                child = Child(
                    f"archiver-{name}",
                    [sys.executable, "-m", "services.archiver"],
                    env,
                    tmp_path / f"worker-{name}" / "archiver.log",
                )
                workers.append(child.start())
            ports = dict(
                zip(("a", "b"), [int(w.env["METRICS_PORT"]) for w in workers], strict=True)
            )

            db = stack.data_dir / "archive.sqlite3"
            deadline = time.monotonic() + 120
            done = 0
            while time.monotonic() < deadline:
                if db.exists():
                    with (
                        contextlib.suppress(sqlite3.OperationalError),  # not migrated yet
                        sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn,
                    ):
                        done = conn.execute(
                            "SELECT count(*) FROM archive_jobs"
                            " WHERE status = 'succeeded' AND kind = 'capture'"
                        ).fetchone()[0]
                if done >= len(links):
                    break
                time.sleep(0.5)
            if done != len(links):
                report = "\n".join([
                    database_counts(db),
                    log_tails([*(stack.data_dir / "logs").glob("*.log"),
                               *(w.log_path for w in workers if w.log_path)]),
                ])  # fmt: skip
                pytest.fail(f"{done}/{len(links)} captured\n{report}")

            # both workers took part
            for name, port in ports.items():
                text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
                captured = sum(
                    float(line.rsplit(" ", 1)[1])
                    for line in text.splitlines()
                    if line.startswith("dla_capture_jobs_total{")
                    and not any(f'outcome="{o}"' in line for o in ("invalid", "nak"))
                )
                assert captured >= 1, f"archiver {name} captured nothing"
            # the per-domain limit held across both workers
            assert max(counts.peak.values()) == 1, dict(counts.peak)
            assert set(counts.peak) == {"127.0.0.2", "127.0.0.3"}
        finally:
            for w in workers:
                w.stop()
            stack.stop(engines_grace_s=ENGINES_GRACE_S)
