"""kill -9 of the writer while it backs the database up: the restart sweeps the half-made
backup, loses nothing, backs up again, and that backup restores to the same content."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from testkit.chaos import count, record
from testkit.live_writer import REPO, LiveWriter, publish_all, writer_idle
from testkit.waiting import until
from testkit.writer_harness import occ, post

pytestmark = pytest.mark.integration


def backing_up(writer: LiveWriter) -> bool:
    return any(writer.db_path.parent.glob(".backup-*"))


@pytest.mark.timeout(300)
def test_writer_killed_during_a_backup(
    tmp_path: Path, nats_url: str, s3_env: dict[str, str], http: httpx.Client
) -> None:
    n = count("CHAOS_BACKUP_POSTS", 3000)
    env = {**s3_env, "S3_BUCKET": "chaos-backups", "BACKUP_INTERVAL_SECONDS": "1"}
    writer = LiveWriter(tmp_path / "data", nats_url, env)
    writer.data_dir.mkdir(parents=True)
    writer.start()
    try:
        asyncio.run(
            publish_all(
                nats_url, [post(f"g{i}", occ(f"https://x.com/u/status/{i}")) for i in range(n)]
            )
        )
        asyncio.run(until(lambda: writer_idle(nats_url), 120, "posts applied"))
        deadline = time.monotonic() + 120
        while not backing_up(writer) and time.monotonic() < deadline:
            time.sleep(0.002)
        assert backing_up(writer), "a backup started"
        writer.kill9()
        assert backing_up(writer), "the half-made backup is left behind by the kill"
        writer.start()
        writer.wait_for(
            lambda: not backing_up(writer) or _backups_ok(http, writer) > 0, 60, "sweep"
        )
        writer.wait_for(lambda: _backups_ok(http, writer) > 0, 120, "a backup after the restart")
        assert writer.count("discourse_posts") == n
    finally:
        code = writer.stop()
    assert code == 0
    restored = tmp_path / "restored" / "archive.sqlite3"
    restored.parent.mkdir()
    renv = {**writer.full_env(), "DATABASE_PATH": str(restored), "DATA_DIR": str(restored.parent)}
    subprocess.run(
        [sys.executable, "-m", "services.writer", "restore"],
        env=renv,
        cwd=REPO,
        check=True,
        timeout=120,
    )
    check = LiveWriter(restored.parent, nats_url)
    assert check.query("SELECT count(*) FROM discourse_posts") == [(n,)]
    assert check.query("PRAGMA integrity_check") == [("ok",)]
    leftovers = [p.name for p in writer.db_path.parent.glob(".backup-*")]
    record(
        "backup_restart",
        {
            "posts": n,
            "restored_posts": n,
            "leftovers_after_restart": len(leftovers),
            "integrity_check": "ok",
        },
    )


def _backups_ok(http: httpx.Client, writer: LiveWriter) -> float:
    try:
        text = http.get(f"{writer.metrics_url}/metrics").text
    except (httpx.HTTPError, OSError, ValueError):
        return 0
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("dla_writer_backups_total{") and 'outcome="ok"' in line
    )
