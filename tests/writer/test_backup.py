"""Backups on real SeaweedFS: VACUUM INTO + gzip + upload, and the restore CLI."""

from __future__ import annotations

import gzip
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from services.writer import backup
from services.writer.db import open_db, writer_lock
from services.writer.settings import WriterSettings
from shared.backup_layout import PREFIX, private_key_of_date
from shared.messages import SubmitCommand
from shared.s3 import ObjectStore
from testkit.live_writer import REPO, LiveWriter, publish_all
from testkit.writer_harness import T0, Harness, dump, occ, post
from tests.writer.scenario import capture_messages, feed_messages
from tests.writer.test_backup_rows import rows_of_link
from tests.writer.test_moderation import NOT_THE_LINK, captured, takedown, undo

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
    # a prefix of its own: the restore raises the link id mark to the highest archives/<id>/
    # in the bucket, which the session's other tests share (they left ids up to 9 there)
    s3_env = {**s3_env, "S3_PREFIX": "every-row/"}
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
    # purged at once (no undo window): neither file of the backup keeps a row of the link
    h = Harness(open_db(source.db_path))
    h.policy = replace(h.policy, takedown_undo=timedelta(0))
    h.apply(SubmitCommand(url=url, request_id="s1", requested_at=T0))
    h.apply(takedown(h.one("SELECT id FROM links")))
    await backup.backup(source, DAY)
    h.conn.close()

    target = tmp_path / "b"
    done = restore_cli(target, s3_env, "--date", "2026-03-04")
    assert done.returncode == 0, done.stderr
    async with ObjectStore(source) as store:
        published = gzip.decompress(
            await store.get_bytes("db-backups/2026-03-04/archive.sqlite3.gz")
        )
    assert b"where-they-nest" not in published
    r = Harness(open_db(target / "archive.sqlite3"))
    try:
        assert r.one("SELECT count(*) FROM links") == 0
        # the owner's restored database has the URL in its audit trail only
        assert "where-they-nest" in r.one("SELECT detail FROM admin_audit")
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


def rows_of(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


async def test_a_restore_onto_an_empty_disk_keeps_the_audit_undo_windows_and_link_ids(
    tmp_path: Path, s3_env: dict, nats_url: str, live_writer: Callable[..., LiveWriter]
) -> None:
    day, date = datetime(2026, 3, 7, 8, tzinfo=UTC), "2026-03-07"
    source = settings_for(tmp_path / "a", s3_env)
    h = Harness(open_db(source.db_path))
    for n in range(1, 5):
        h.apply(SubmitCommand(url=f"https://ids.example/{n}", request_id=f"s{n}", requested_at=T0))
    ids = [int(r[0]) for r in h.rows("SELECT id FROM links ORDER BY id")]
    kept, down_with_objects, down_last = ids[1], ids[2], ids[3]
    stored = f"archives/{down_with_objects}/1/page.html"
    async with ObjectStore(source) as store:
        await store.ensure_bucket()
        await store.put_bytes(stored, b"<p>gone soon</p>", "text/html")
    # taken down before the backup: the newest link (no object: only the backup knows its
    # id) and one whose object is kept for the undo window (T0 + 7 days, long past when the
    # restored writer runs: it purges both)
    h.apply(takedown(down_last, "t1"), takedown(down_with_objects, "t2"))
    audit = h.rows("SELECT * FROM admin_audit ORDER BY id")
    holds = [tuple(r) for r in h.rows("SELECT * FROM takedown_holds ORDER BY link_id")]
    assert len(audit) == 2 and len(holds) == 2
    await backup.backup(source, day)
    h.conn.close()

    async with ObjectStore(source) as store:
        public = tmp_path / "public.sqlite3"
        public.write_bytes(
            gzip.decompress(await store.get_bytes(f"db-backups/{date}/archive.sqlite3.gz"))
        )
        assert await store.head(private_key_of_date(date)) is not None
        # what /export/backup lists and serves: the private part is not among it
        assert private_key_of_date(date) not in await store.list_keys(PREFIX)
    for table in ("admin_audit", "s3_removals", "takedown_holds"):
        assert rows_of(public, f"SELECT count(*) FROM {table}") == [(0,)]
    assert rows_of(public, "SELECT max(id) FROM links") == [(kept,)]

    target = tmp_path / "b"  # an empty disk
    done = restore_cli(target, s3_env, "--date", date)
    assert done.returncode == 0, done.stderr
    restored = target / "archive.sqlite3"
    assert rows_of(restored, "SELECT * FROM admin_audit ORDER BY id") == [tuple(r) for r in audit]
    assert rows_of(restored, "SELECT * FROM takedown_holds ORDER BY link_id") == holds

    writer = live_writer(target, nats_url, s3_env).start()
    writer.wait_for(
        lambda: writer.count("takedown_holds") == 0 and writer.count("s3_removals") == 0,
        60,
        "the undo windows ended: links purged, their objects removed",
    )
    purged = "SELECT target FROM admin_audit WHERE action = 'purge' ORDER BY target"
    assert writer.query(purged) == [(f"link {down_with_objects}",), (f"link {down_last}",)]
    async with ObjectStore(source) as store:
        assert await store.list_keys(f"archives/{down_with_objects}/") == []
    await publish_all(
        nats_url, [SubmitCommand(url="https://ids.example/new", request_id="s5", requested_at=T0)]
    )
    new = "SELECT id FROM links WHERE original_url = 'https://ids.example/new'"
    writer.wait_for(lambda: writer.query(new), 60, "the link submitted after the restore")
    assert writer.query(new)[0][0] > max(ids)


async def test_a_takedown_backed_up_in_its_window_is_undone_after_a_restore_onto_an_empty_disk(
    tmp_path: Path, s3_env: dict, nats_url: str, live_writer: Callable[..., LiveWriter]
) -> None:
    day, date = datetime(2026, 3, 8, 9, tzinfo=UTC), "2026-03-08"
    s3_env = {**s3_env, "S3_PREFIX": "held/"}  # (other tests' link prefixes raise the id mark)
    source = settings_for(tmp_path / "a", s3_env)
    h = Harness(open_db(source.db_path), now=datetime.now(UTC))  # the live writer's clock
    job = captured(h, "https://x.com/u/status/77")
    link_id, key = job["link_id"], h.one("SELECT s3_key FROM archive_artifacts")
    async with ObjectStore(source) as store:
        await store.ensure_bucket()
        await store.put_bytes(key, b"<p>owls</p>", "text/html")
    before = dump(h.conn, skip=NOT_THE_LINK)
    h.apply(takedown(link_id))
    await backup.backup(source, day)
    h.conn.close()
    public = tmp_path / "public.sqlite3"
    async with ObjectStore(source) as store:
        public.write_bytes(
            gzip.decompress(await store.get_bytes(f"db-backups/{date}/archive.sqlite3.gz"))
        )
    published = sqlite3.connect(public)
    try:  # nothing of the link in the publishable copy (the forum's post quotes its URL)
        assert set(rows_of_link(published, link_id).values()) == {0}
    finally:
        published.close()
    assert b"barn owls" not in public.read_bytes() and b"court order" not in public.read_bytes()

    target = tmp_path / "b"  # an empty disk
    done = restore_cli(target, s3_env, "--date", date)
    assert done.returncode == 0, done.stderr
    writer = live_writer(target, nats_url, s3_env).start()
    await publish_all(nats_url, [undo(link_id)])
    audit = "SELECT action, admin, outcome FROM admin_audit ORDER BY id"
    writer.wait_for(lambda: len(writer.query(audit)) == 2, 60, "the undo applied")
    assert writer.query(audit) == [("takedown", "alice", "done"), ("undo", "bob", "done")]
    writer.stop()
    restored = sqlite3.connect(f"file:{writer.db_path}?mode=ro", uri=True)
    try:
        assert dump(restored, skip=NOT_THE_LINK) == before  # shown again exactly as before
    finally:
        restored.close()
    async with ObjectStore(source) as store:  # its files were kept for the undo
        assert await store.get_bytes(key) == b"<p>owls</p>"
