"""The writer's SQLite database: the only code in the product that writes SQL.

The database file is ``DATABASE_PATH`` (default ``DATA_DIR/archive.sqlite3``) in WAL mode.
Readers (the web service, people with ``sqlite3``) open it read-only with the URI
``file:<path>?mode=ro`` (``sqlite3.connect(uri, uri=True)``): WAL lets them read while the
writer commits, and they never take the write lock. Only the writer process opens it for
writing; it holds ``<path>.writer.lock`` (an advisory ``flock``) while it runs.
"""

from services.writer.db.connection import open_db, transaction, writer_lock
from services.writer.db.migrate import current_version, latest_version, migrate

__all__ = [
    "current_version",
    "latest_version",
    "migrate",
    "open_db",
    "transaction",
    "writer_lock",
]
