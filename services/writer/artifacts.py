"""The files of snapshots: the one module writing ``archive_artifacts``."""

from __future__ import annotations

import sqlite3

from shared.hooks.records import ArtifactRecord


def record(
    conn: sqlite3.Connection,
    link_id: int,
    snapshot_id: str,
    rec: ArtifactRecord,
    now: str,
    delivery: tuple[int, int] | None = None,
) -> None:
    """One uploaded file (its S3 key is its identity, written once: a record seen again, as
    from a redelivered event, changes nothing; a re-run hook's file has a key of its own).
    `delivery`: the (attempt, run) of the job that stored it, None when no run did (a
    timestamp token)."""
    attempt, run = delivery if delivery is not None else (None, None)
    conn.execute(
        "INSERT INTO archive_artifacts (link_id, snapshot_id, plugin, kind, path, s3_key,"
        " content_type, bytes, sha256, truncated, created_at, attempt, run)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (s3_key) DO NOTHING",
        (
            link_id,
            snapshot_id,
            rec.plugin,
            rec.kind,
            rec.path,
            rec.s3_key,
            rec.content_type,
            rec.bytes,
            rec.sha256,
            int(rec.truncated),
            now,
            attempt,
            run,
        ),
    )


def move_to_link(conn: sqlite3.Connection, loser: int, survivor: int) -> None:
    """Dedup merged link `loser` into `survivor`: its files follow."""
    conn.execute("UPDATE archive_artifacts SET link_id = ? WHERE link_id = ?", (survivor, loser))


def remove_for_link(conn: sqlite3.Connection, link_id: int) -> list[str]:
    """Forget every file of a link (a takedown); returns their S3 keys, to delete there."""
    return _remove(conn, "link_id", link_id)


def remove_for_snapshot(conn: sqlite3.Connection, snapshot_id: str) -> list[str]:
    """Forget every file of one capture (a page that asked not to be archived); returns
    their S3 keys, to delete there."""
    return _remove(conn, "snapshot_id", snapshot_id)


def _remove(conn: sqlite3.Connection, column: str, value: int | str) -> list[str]:
    where = f"FROM archive_artifacts WHERE {column} = ?"
    keys = [str(k) for (k,) in conn.execute(f"SELECT s3_key {where}", (value,))]
    conn.execute(f"DELETE {where}", (value,))
    return keys
