"""Backups on real SeaweedFS: VACUUM INTO + gzip + upload, and the restore CLI."""

from __future__ import annotations

import gzip
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from services.writer import backup
from services.writer.db import open_db, writer_lock
from services.writer.settings import WriterSettings
from shared.messages import SubmitCommand
from shared.s3 import ObjectStore
from testkit.live_writer import REPO
from testkit.writer_harness import T0, Harness, dump, occ, post
from tests.writer.scenario import capture_messages, feed_messages
from tests.writer.test_moderation import takedown

pytestmark = pytest.mark.integration

DAY = datetime(2026, 3, 4, 5, 6, tzinfo=UTC)


def settings_for(data: Path, s3_env: dict[str, str]) -> WriterSettings:
    return WriterSettings.model_validate(
        {"data_dir": data, **{k.lower(): v for k, v in s3_env.items()}}
    )


def restore_cli(data: Path, s3_env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "DATA_DIR": str(data), **s3_env}
    return subprocess.run(
        [sys.executable, "-m", "services.writer", "restore", *args],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_backup_then_restore_gives_back_every_row(tmp_path: Path, s3_env: dict) -> None:
    source = settings_for(tmp_path / "a", s3_env)
    conn = open_db(source.db_path)
    h = Harness(conn)
    h.apply(*feed_messages())
    h.dispatch()
    h.apply(*capture_messages(dict(h.jobs("running")[0])))
    original = dump(conn)
    key = await backup.backup(source, DAY)  # while the connection is open (WAL not checkpointed)
    assert key == "db-backups/2026-03-04/archive.sqlite3.gz"
    conn.close()

    target = tmp_path / "b"
    target.mkdir()
    (target / "archive.sqlite3").write_bytes(b"an older database")
    done = restore_cli(target, s3_env, "--date", "2026-03-04")
    assert done.returncode == 0, done.stderr
    assert [p.read_bytes() for p in target.glob("archive.sqlite3.before-restore-*")] == [
        b"an older database"
    ]
    restored = sqlite3.connect(f"file:{target / 'archive.sqlite3'}?mode=ro", uri=True)
    assert dump(restored) == original
    assert restored.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    restored.close()
    # The restored database is a working writer database (migrations are a no-op).
    open_db(target / "archive.sqlite3").close()


async def test_a_restored_backup_still_refuses_a_url_taken_down(
    tmp_path: Path, s3_env: dict
) -> None:
    url = "https://news.example/owls/where-they-nest"
    source = settings_for(tmp_path / "a", s3_env)
    h = Harness(open_db(source.db_path))
    h.apply(SubmitCommand(url=url, request_id="s1", requested_at=T0))
    h.apply(takedown(h.one("SELECT id FROM links")))
    await backup.backup(source, DAY)
    h.conn.close()

    target = tmp_path / "b"
    done = restore_cli(target, s3_env, "--date", "2026-03-04")
    assert done.returncode == 0, done.stderr
    assert b"where-they-nest" not in (target / "archive.sqlite3").read_bytes()
    r = Harness(open_db(target / "archive.sqlite3"))
    try:
        assert r.one("SELECT count(*) FROM links") == 0
        r.apply(post("g1", occ(url + "?utm_source=forum")))
        assert r.one("SELECT taken_down_at IS NOT NULL FROM links") == 1
        assert [j["reason"] for j in r.jobs()] == ["taken down"]
    finally:
        r.conn.close()


async def test_restore_refuses_a_corrupt_backup_and_a_running_writer(
    tmp_path: Path, s3_env: dict
) -> None:
    settings = settings_for(tmp_path, s3_env)
    open_db(settings.db_path).close()
    before = settings.db_path.read_bytes()
    async with ObjectStore(settings) as store:
        await store.ensure_bucket()
        await store.put_bytes(
            "db-backups/2001-01-01/archive.sqlite3.gz", b"not gzip", "application/gzip"
        )
        await store.put_bytes(
            "db-backups/2001-01-02/archive.sqlite3.gz",
            gzip.compress(b"SQLite format 3\x00" + b"\x00" * 200),
            "application/gzip",
        )
    for day in ("2001-01-01", "2001-01-02", "1999-09-09"):
        failed = restore_cli(tmp_path, s3_env, "--date", day)
        assert failed.returncode == 1, failed.stdout
        assert settings.db_path.read_bytes() == before
    with writer_lock(settings.db_path):
        busy = restore_cli(tmp_path, s3_env)
    assert busy.returncode == 3 and "another writer" in busy.stderr
