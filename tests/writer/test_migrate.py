"""Versioned migrations: from empty and from every earlier version to the latest."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from services.writer.db import current_version, latest_version, migrate, open_db
from services.writer.db.migrate import migrations


def schema(conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
    return sorted(
        tuple(r)
        for r in conn.execute(
            "SELECT type, name, coalesce(sql, '') FROM sqlite_master"
            " WHERE name != 'sqlite_sequence'"
        ).fetchall()
    )


def test_migrates_from_empty_in_wal_mode(db_path: Path) -> None:
    conn = open_db(db_path)
    assert current_version(conn) == latest_version() >= 2
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {
        "discourse_posts",
        "links",
        "link_occurrences",
        "archive_jobs",
        "archive_artifacts",
        "link_metadata",
        "link_text_fts",
        "snapshots",
        "archive_results",
        "binaries",
        "link_aliases",
        "link_tags",
        "feed_gaps",
        "processed_messages",
        "submissions",
        "schema_version",
    } <= tables
    fts_cols = [r[1] for r in conn.execute("PRAGMA table_info(link_text_fts)")]
    assert fts_cols == [
        "link_id",
        "title",
        "url",
        "domain",
        "extracted_text",
        "media_text",
        "post_text",
    ]
    assert migrate(conn) == latest_version()  # a second run changes nothing


@pytest.mark.parametrize("start", range(1, len(migrations())))
def test_migrates_from_each_earlier_version_keeping_data(tmp_path: Path, start: int) -> None:
    old = sqlite3.connect(tmp_path / "old.sqlite3", isolation_level=None)
    assert migrate(old, target=start) == start
    old.execute(
        "INSERT INTO links (original_url, normalized_url, canonical_url, domain,"
        " first_seen_at, last_seen_at) VALUES ('https://x.com/a?utm_source=1',"
        " 'https://x.com/a', 'https://x.com/a', 'x.com', '2025-01-01', '2025-01-01')"
    )
    old.execute(
        "INSERT INTO archive_jobs (link_id, enqueued_at, status) VALUES (1, '2025-01-01', 'queued')"
    )
    old.close()

    upgraded = open_db(tmp_path / "old.sqlite3")
    fresh = open_db(tmp_path / "fresh.sqlite3")
    assert current_version(upgraded) == latest_version()
    assert schema(upgraded) == schema(fresh)
    link = upgraded.execute("SELECT * FROM links").fetchone()
    assert link["normalized_url"] == "https://x.com/a" and link["status"] == "pending"
    job = upgraded.execute("SELECT * FROM archive_jobs").fetchone()
    assert job["kind"] == "capture" and job["attempts"] == 0 and job["status"] == "queued"


def test_a_failing_migration_leaves_the_previous_version(tmp_path: Path, monkeypatch) -> None:
    import importlib

    mod = importlib.import_module("services.writer.db.migrate")

    real = mod.migrations()
    broken = [*real, mod.Migration(len(real) + 1, "broken", "CREATE TABLE t (a); SELECT nope();")]
    monkeypatch.setattr(mod, "migrations", lambda: broken)
    conn = sqlite3.connect(tmp_path / "x.sqlite3", isolation_level=None)
    with pytest.raises(sqlite3.Error):
        mod.migrate(conn)
    assert current_version(conn) == len(real)
    assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 't'").fetchone()


def test_posts_stored_before_forums_get_the_forum_of_their_post_url(tmp_path: Path) -> None:
    from shared.discourse import forum_of

    old = sqlite3.connect(tmp_path / "old.sqlite3", isolation_level=None)
    migrate(old, target=14)
    urls = [
        "https://Discuss.Example.com/t/a-topic/12/3",
        "http://127.0.0.1:8080/t/topic/1#post_2",
        "https://forum.test/t/b/7?page=2#post_31",
        "https://forum.test?u=@bob",
    ]
    for n, url in enumerate(urls):
        old.execute(
            "INSERT INTO discourse_posts (guid, post_url, content_html, content_hash,"
            " last_seen_at) VALUES (?, ?, '', '', '2025-01-01')",
            (f"g{n}", url),
        )
    old.close()
    upgraded = open_db(tmp_path / "old.sqlite3")
    got = [r[0] for r in upgraded.execute("SELECT forum FROM discourse_posts ORDER BY id")]
    assert got == ["discuss.example.com", "127.0.0.1:8080", "forum.test", "forum.test"]
    assert got == [forum_of(u) for u in urls]  # what the writer stores for new posts
