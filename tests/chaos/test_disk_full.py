"""The disk under the writer's database fills: the writer stops accepting (naks, /healthz
503), loses nothing, recovers when space returns, and the database passes integrity_check."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import httpx
import pytest

from testkit.chaos import count, record
from testkit.live_writer import LiveWriter, publish_all, writer_idle
from testkit.small_disk import fill, small_disk
from testkit.waiting import until
from testkit.writer_harness import occ, post

pytestmark = pytest.mark.integration


class WriterOnDisk(LiveWriter):
    """The live writer with its database at DATABASE_PATH."""

    @property
    def db_path(self) -> Path:
        return Path(self.env["DATABASE_PATH"])


def posts(start: int, n: int) -> list:
    return [post(f"guid-{i}", occ(f"https://x.com/u/status/{i}")) for i in range(start, start + n)]


def health(http: httpx.Client, writer: LiveWriter) -> int:
    try:
        return http.get(f"{writer.metrics_url}/healthz").status_code
    except httpx.HTTPError:
        return 0


async def test_a_full_disk_stops_the_writer_without_losing_anything(
    tmp_path: Path, nats_url: str, http: httpx.Client
) -> None:
    # More posts arrive while full than the first ones took: they cannot all fit in WAL
    # pages the database already owns (which need no new disk blocks).
    before, during = count("CHAOS_DISK_POSTS", 200), 10 * count("CHAOS_DISK_POSTS", 200)
    with small_disk(tmp_path / "small", size_mb=count("CHAOS_DISK_MB", 16)) as disk:
        env = {"DATABASE_PATH": str(disk / "archive.sqlite3"), "WRITER_RETRY_DELAY_SECONDS": "1"}
        writer = WriterOnDisk(tmp_path / "data", nats_url, env)
        writer.data_dir.mkdir(parents=True)
        writer.start()
        try:
            await publish_all(nats_url, posts(0, before))
            await until(lambda: writer_idle(nats_url), 60, "first posts applied")
            assert writer.query("SELECT count(*) FROM discourse_posts") == [(before,)]

            filler = fill(disk)
            await publish_all(nats_url, posts(before, during))
            writer.wait_for(
                lambda: health(http, writer) == 503, 60, "/healthz says the database is down"
            )
            # the scheduler's writes may meet the full disk first (/healthz is 503 then too):
            # the disk stays full until the posts' own batches have failed and been nak'ed
            writer.wait_for(lambda: retried(writer) > 0, 60, "messages nak'ed while full")
            stalled = writer.query("SELECT count(*) FROM discourse_posts")[0][0]
            assert writer.child is not None and writer.child.alive(), "the writer kept running"

            full_at = time.monotonic()
            filler.unlink()
            await until(lambda: writer_idle(nats_url), 120, "the rest applied once space returned")
            recovered_s = time.monotonic() - full_at
            writer.wait_for(lambda: health(http, writer) == 200, 60, "/healthz ok again")
            assert writer.query("SELECT count(*) FROM discourse_posts") == [(before + during,)]
            assert writer.query("SELECT count(*) FROM links") == [(before + during,)]
            naks = retried(writer)
        finally:
            code = writer.stop()
        assert code == 0
        db = sqlite3.connect(f"file:{writer.db_path}?mode=ro", uri=True)
        try:
            assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        finally:
            db.close()
    record(
        "disk_full",
        {
            "posts_before": before,
            "posts_while_full": during,
            "applied_while_full": stalled - before,
            "redelivered_messages": naks,
            "recovery_s": round(recovered_s, 1),
            "integrity_check": "ok",
            "lost": 0,
        },
    )
    assert naks > 0, "messages were nak'ed while the disk was full"


def retried(writer: LiveWriter) -> float:
    """Messages the writer nak'ed for redelivery (its database unavailable); 0 while its
    /metrics does not answer."""
    try:
        return _metric(writer, "dla_writer_messages_total", 'outcome="retried"')
    except httpx.HTTPError:
        return 0.0


def _metric(writer: LiveWriter, name: str, label: str) -> float:
    text = httpx.get(f"{writer.metrics_url}/metrics", timeout=5).text
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith(name + "{") and label in line
    )
