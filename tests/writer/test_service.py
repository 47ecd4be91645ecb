"""The writer as a real process on a real nats-server (and SeaweedFS for its backup)."""

from __future__ import annotations

import gzip
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from services.writer.db import open_db
from shared import bus
from shared.backup_layout import backup_key
from shared.messages import CaptureJob
from shared.s3 import ObjectStore
from shared.settings import CommonSettings
from shared.subjects import ARCHIVER_JOBS
from testkit.live_writer import publish_all, writer_idle
from testkit.waiting import until
from testkit.writer_harness import occ, post, user_tables
from tests.writer.scenario import capture_messages, feed_messages

pytestmark = pytest.mark.integration

UA_MARKER = "ua-marker-5f0c1e9a"
NATS_PASSWORD = "natspw-marker-91ab3c"


def all_cells(db: Path) -> list[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        cells: list[str] = []
        for table in user_tables(conn):
            for row in conn.execute(f"SELECT * FROM {table}"):
                cells.extend(str(v) for v in row)
        return cells
    finally:
        conn.close()


async def test_writer_process_end_to_end(
    tmp_path: Path, nats_url: str, s3_env: dict, live_writer
) -> None:
    data = tmp_path / "data"
    secret_url = nats_url.replace("nats://", f"nats://dla:{NATS_PASSWORD}@")
    writer = live_writer(
        data, secret_url, {**s3_env, "USER_AGENT": UA_MARKER, "BACKUP_INTERVAL_SECONDS": "86400"}
    )
    writer.start()
    feed = feed_messages()
    await publish_all(nats_url, feed)
    nc = await bus.connect(nats_url, "test-bad-publisher")
    await nc.publish("feed.post", b"{not json")
    await nc.publish("cmd.submit", json.dumps({"url": "https://x.com/a"}).encode())
    await nc.flush()

    writer.wait_for(lambda: writer.count("processed_messages") == len(feed), 20, "feed applied")

    writer.wait_for(
        lambda: (
            writer.query(
                "SELECT count(*) FROM archive_jobs WHERE status = 'running'"
                " AND published_at NOT NULL"
            )
            == [(4,)]
        ),
        10,
        "dispatch",
    )
    # Act as a capture worker: take one dispatched job and report a whole capture of it.
    js = nc.jetstream()
    sub = await bus.pull_subscribe(js, ARCHIVER_JOBS)
    msgs = await bus.fetch(sub, 10, timeout=5)
    jobs = [CaptureJob.model_validate_json(m.data) for m in msgs]
    assert len(jobs) == 4  # WORKER_CONCURRENCY, all on different domains
    assert {j.attempt for j in jobs} == {1} and all(j.hooks is None for j in jobs)
    first = jobs[0]
    job = {
        "id": first.job_id,
        "link_id": first.link_id,
        "snapshot_id": first.snapshot_id,
        "attempts": first.attempt,
    }
    await publish_all(nats_url, capture_messages(job))
    for m in msgs:
        await m.ack()
    writer.wait_for(
        lambda: (
            writer.query("SELECT status FROM archive_jobs WHERE id = ?", first.job_id)
            == [("succeeded",)]
        ),
        20,
        "job succeeded",
    )
    assert writer.count("archive_artifacts") == 2  # the raw response and the text
    await until(lambda: writer_idle(nats_url), 10, "consumers idle")

    async with httpx.AsyncClient() as client:
        health = (await client.get(f"{writer.metrics_url}/healthz")).json()
        metrics = (await client.get(f"{writer.metrics_url}/metrics")).text
    assert health["ok"] is True and health["db"] == "ok"
    assert 'dla_writer_messages_total{outcome="terminated",subject="feed.post"} 1.0' in metrics
    assert 'dla_writer_messages_total{outcome="terminated",subject="cmd.submit"} 1.0' in metrics
    assert "dla_writer_apply_duration_seconds_count" in metrics
    await nc.close()

    assert writer.stop() == 0
    log = writer.log_path.read_text()
    assert "invalid feed.post message" in log and "b'{not json'" in log

    # The shutdown backup is in S3.
    settings = CommonSettings.model_validate({k.lower(): v for k, v in s3_env.items()})
    async with ObjectStore(settings) as store:
        backup = gzip.decompress(await store.get_bytes(backup_key(datetime.now(UTC))))

    # Publishable: no secret and no setting of the writer reached the database or its backup.
    markers = [
        s3_env["AWS_SECRET_ACCESS_KEY"],
        s3_env["AWS_ACCESS_KEY_ID"],
        NATS_PASSWORD,
        UA_MARKER,
        s3_env["S3_ENDPOINT"],
        str(data),
    ]
    cells = all_cells(writer.db_path)
    assert len(cells) > 100
    blobs = [backup] + [p.read_bytes() for p in data.glob("archive.sqlite3*") if p.is_file()]
    for marker in markers:
        assert not [c for c in cells if marker in c], marker
        assert not [b for b in blobs if marker.encode() in b], marker


RETRIED = 'dla_writer_messages_total{outcome="retried",subject="feed.post"}'


@pytest.mark.parametrize("migrated", [False, True], ids=["new", "migrated"])
async def test_a_database_locked_at_start_is_waited_for(
    tmp_path: Path, nats_url: str, live_writer, migrated: bool
) -> None:
    """A new database is locked before its migration; a migrated one (nothing to migrate, so
    opening reads only) before the start's first write, the tombstone sync."""
    data = tmp_path / "data"
    data.mkdir()
    if migrated:
        open_db(data / "archive.sqlite3").close()
    blocker = sqlite3.connect(data / "archive.sqlite3", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # held before the writer even starts
    writer = live_writer(data, nats_url).start()
    writer.wait_for(
        lambda: "cannot open the database" in writer.log_path.read_text(errors="replace"),
        30,
        "opening the locked database failing (and being retried)",
    )
    assert writer.child is not None and writer.child.alive()
    blocker.execute("ROLLBACK")
    blocker.close()
    await publish_all(nats_url, [post("after-lock", occ("https://x.com/a/status/1"))])
    writer.wait_for(lambda: writer.count("discourse_posts") == 1, 30, "applied after the lock")


async def test_a_locked_database_delays_messages_but_loses_none(
    tmp_path: Path, nats_url: str, live_writer
) -> None:
    writer = live_writer(tmp_path / "data", nats_url).start()
    async with httpx.AsyncClient() as client:

        async def migrated() -> bool:
            return (await client.get(f"{writer.metrics_url}/healthz")).status_code == 200

        await until(migrated, 30, "the writer to open and migrate the database")
    blocker = sqlite3.connect(writer.db_path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # someone else holds the write lock
    try:
        await publish_all(nats_url, [post(f"locked-{i}", occ(f"https://x.com/a/status/{i}"))
                                     for i in range(20)])  # fmt: skip
        async with httpx.AsyncClient() as client:

            async def unhealthy() -> bool:
                return (await client.get(f"{writer.metrics_url}/healthz")).status_code == 503

            await until(unhealthy, 15, "/healthz reports the database error")

            async def retried() -> bool:
                metrics = (await client.get(f"{writer.metrics_url}/metrics")).text
                return RETRIED in metrics

            await until(retried, 15, "a batch failing on the lock and being retried")
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert writer.child is not None and writer.child.alive()
    writer.wait_for(lambda: writer.count("discourse_posts") == 20, 30, "applied after the lock")
    await until(lambda: writer_idle(nats_url), 10, "consumers idle")
    async with httpx.AsyncClient() as client:
        assert (await client.get(f"{writer.metrics_url}/healthz")).status_code == 200
        metrics = (await client.get(f"{writer.metrics_url}/metrics")).text
    assert RETRIED in metrics
    assert writer.count("archive_jobs") == 20
    assert writer.stop() == 0
