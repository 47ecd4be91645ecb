"""The web's read-only view of the database: a small pool of ``mode=ro`` connections.

The web never writes (a rule test checks it). Queries run in worker threads so a slow one
never blocks the event loop; before the writer created the file every read sees nothing.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from sqlalchemy import Connection, Engine, create_engine
from sqlalchemy.pool import QueuePool

T = TypeVar("T")
MMAP_BYTES = 16 << 30
"""Address space each read connection may map the database file into (SQLite reads the
rest of a larger file the usual way); it costs no memory beyond the OS page cache."""


class ReadDB:
    """Read-only connections to the archive database, created once the file exists."""

    def __init__(self, path: Path, pool_size: int = 8) -> None:
        self.path = path
        self._pool_size = pool_size
        self._engine: Engine | None = None
        self._lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            f"file:{self.path}?mode=ro", uri=True, timeout=5, check_same_thread=False
        )
        conn.execute("PRAGMA query_only = 1")
        # Pages the FTS index and the tables are read straight from the OS page cache,
        # with no read() copy per page into each connection's small private cache.
        conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        return conn

    def engine(self) -> Engine | None:
        """The engine, or None while there is no database file."""
        if self._engine is None:
            with self._lock:
                if self._engine is None and self.path.exists():
                    self._engine = create_engine(
                        "sqlite://",
                        creator=self._connect,
                        poolclass=QueuePool,
                        pool_size=self._pool_size,
                        max_overflow=self._pool_size * 2,
                        pool_timeout=10,
                    )
        return self._engine

    def read_sync(self, query: Callable[[Connection], T], default: T) -> T:
        """Run a query on a pooled connection (default when there is no database yet)."""
        engine = self.engine()
        if engine is None:
            return default
        with engine.connect() as conn:
            return query(conn)

    async def read(self, query: Callable[[Connection], T], default: T) -> T:
        """``read_sync`` in a worker thread."""
        return await asyncio.to_thread(self.read_sync, query, default)

    def dispose(self) -> None:
        """Close every pooled connection."""
        if self._engine is not None:
            self._engine.dispose()
