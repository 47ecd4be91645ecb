"""What a backup leaves out and what its private part keeps: a link taken down within its
undo window leaves the publishable copy whole, and comes back whole from the private part."""

from __future__ import annotations

import gzip
import sqlite3
from dataclasses import replace
from pathlib import Path

from services.writer import backup, backup_rows
from services.writer.db import open_db
from testkit.writer_harness import Harness, dump
from tests.writer.scenario import (
    capture_messages,
    evidence_messages,
    external_messages,
    feed_messages,
    liveness_messages,
    recapture_messages,
)
from tests.writer.test_moderation import takedown, undo

NOT_A_ROW_OF_IT = {"submissions"}
"""The table naming a link where the scenario leaves no row of the held link (the
submissions are of other links)."""


def rows_of_link(conn: sqlite3.Connection, link_id: int) -> dict[str, int]:
    """How many rows of the link each table holds (`backup_rows.link_rows`)."""
    tables = backup_rows.columns(conn, "main")
    return {
        table: conn.execute(f'SELECT count(*) FROM "{table}" WHERE {where}').fetchone()[0]
        for table, where in backup_rows.link_rows(tables, str(link_id)).items()
    }


def a_link_in_every_table(h: Harness) -> int:
    """A link captured with evidence, a post, a public-archive copy, a liveness check and a
    recapture: a row of it in every table that names a link."""
    h.policy = replace(h.policy, external_services=("wayback",))
    h.apply(*feed_messages())
    h.dispatch()
    job = dict(h.rows("SELECT * FROM archive_jobs WHERE status = 'running' ORDER BY id")[0])
    h.apply(*capture_messages(job), *evidence_messages(job), *external_messages(job))
    h.advance(hours=2)
    (check,) = h.checks()  # (of the link the capture's redirect merged the job's into)
    link_id = check.link_id
    h.apply(*liveness_messages(check, h.now))
    h.dispatch()
    again = h.rows("SELECT * FROM archive_jobs WHERE status = 'running' AND link_id = ?", link_id)
    h.apply(*recapture_messages(dict(again[0])))
    empty = {t for t, n in rows_of_link(h.conn, link_id).items() if n == 0}
    assert empty == NOT_A_ROW_OF_IT | set(backup_rows.PRIVATE_TABLES) - {"admin_audit"}
    return link_id


def backed_up_and_restored(h: Harness, db_path: Path, tmp_path: Path, link_id: int) -> Path:
    """Take the link down, back the database up (both files), restore them into an empty
    data folder; the publishable file."""
    h.apply(takedown(link_id))
    public, private = tmp_path / "public.sqlite3.gz", tmp_path / "private.sqlite3.gz"
    backup.snapshot_to(db_path, public, private)
    backup.install_file(public, tmp_path / "restored" / "archive.sqlite3", private)
    return public


def test_an_undo_on_a_database_restored_from_a_backup_shows_the_link_as_before(
    h: Harness, db_path: Path, tmp_path: Path
) -> None:
    link_id = a_link_in_every_table(h)
    public = backed_up_and_restored(h, db_path, tmp_path, link_id)

    published = tmp_path / "published.sqlite3"
    published.write_bytes(gzip.decompress(public.read_bytes()))
    conn = sqlite3.connect(published)
    try:
        assert set(rows_of_link(conn, link_id).values()) == {0}
        assert conn.execute("SELECT count(*) FROM link_text_fts WHERE link_text_fts MATCH 'owls'")
    finally:
        conn.close()
    assert b"court order" not in published.read_bytes()

    r = Harness(open_db(tmp_path / "restored" / "archive.sqlite3"), policy=h.policy, now=h.now)
    try:
        assert r.one("SELECT taken_down_at IS NOT NULL FROM links WHERE id = ?", link_id) == 1
        h.advance(days=3)
        r.advance(days=3)
        h.apply(undo(link_id))
        r.apply(undo(link_id))
        # the restored database after the undo is the live one after the same undo: every
        # row of the link back, and the audit trail of both decisions
        assert dump(r.conn) == dump(h.conn)
        assert r.tuples("SELECT action, outcome FROM admin_audit ORDER BY id") == [
            ("takedown", "done"),
            ("undo", "done"),
        ]
        assert r.one("SELECT count(*) FROM link_text_fts WHERE link_text_fts MATCH 'owls'")
    finally:
        r.conn.close()


def test_a_link_held_in_a_restored_database_is_purged_when_its_window_ends(
    h: Harness, db_path: Path, tmp_path: Path
) -> None:
    link_id = a_link_in_every_table(h)
    backed_up_and_restored(h, db_path, tmp_path, link_id)
    r = Harness(open_db(tmp_path / "restored" / "archive.sqlite3"), policy=h.policy, now=h.now)
    try:
        for harness in (h, r):
            harness.advance(days=8)
            assert harness.purge() == [link_id]
        # the same purge as on the live database: what was captured of it gone, its objects
        # queued for removal, an undo refused
        assert dump(r.conn, skip=("processed_messages",)) == dump(
            h.conn, skip=("processed_messages",)
        )
        assert r.one("SELECT count(*) FROM archive_artifacts WHERE link_id = ?", link_id) == 0
        assert r.one("SELECT link_id FROM s3_removals") == link_id
        r.apply(undo(link_id))
        assert "was purged" in r.one("SELECT detail FROM admin_audit WHERE action = 'undo'")
    finally:
        r.conn.close()
