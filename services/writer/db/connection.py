"""Opening the database for writing, transactions, and the single-writer lock."""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from services.writer.db.migrate import migrate
from shared.errors import ConfigError


def open_db(path: Path, *, run_migrations: bool = True) -> sqlite3.Connection:
    """Open (creating if needed) the database for writing, in WAL mode, migrated to latest."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=5)
    try:
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode = WAL")
        # FULL: a committed batch is on disk before its messages are acked, even on power loss.
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA busy_timeout = 2000")
        conn.execute("PRAGMA cache_size = -65536")  # 64 MiB of page cache
        if run_migrations:
            migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT, rolled back when the block raises."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextmanager
def writer_lock(db_path: Path) -> Iterator[Path]:
    """Hold the advisory lock that makes this process the database's only writer."""
    lock_path = db_path.with_name(db_path.name + ".writer.lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise ConfigError(f"another writer holds {lock_path}") from exc
        yield lock_path
    finally:
        os.close(fd)
