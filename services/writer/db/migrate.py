"""Versioned migrations: ``migrations/NNNN_name.sql``, applied in order, each in one transaction."""

from __future__ import annotations

import logging
import re
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources

from shared.content import cjk

log = logging.getLogger(__name__)

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True)
class Migration:
    """One migration file."""

    version: int
    name: str
    sql: str


def migrations() -> list[Migration]:
    """Every migration shipped with the package, by version."""
    found: list[Migration] = []
    folder = resources.files("services.writer.db") / "migrations"
    for entry in folder.iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise RuntimeError(f"migration versions must be 1..N without gaps, got {versions}")
    return found


def latest_version() -> int:
    """The version a fully migrated database has."""
    return len(migrations())


def current_version(conn: sqlite3.Connection) -> int:
    """The version of this database (0 when empty)."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if not exists:
        return 0
    row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def migrate(conn: sqlite3.Connection, target: int | None = None) -> int:
    """Apply every migration above the current version (up to target); returns the version."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_version ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    version = current_version(conn)
    _functions(conn)
    # Table rebuilds (the only way to change a CHECK in SQLite) need foreign keys off; the
    # pragma is a no-op inside a transaction, so it is set here and checked after.
    fk_on = bool(conn.execute("PRAGMA foreign_keys").fetchone()[0])
    conn.execute("PRAGMA foreign_keys = OFF")
    try:
        before, version = version, _apply(conn, version, target)
        broken = conn.execute("PRAGMA foreign_key_check").fetchall() if version > before else []
        if broken:
            raise RuntimeError(f"migration left foreign keys broken: {broken[:5]}")
    finally:
        if fk_on:
            conn.execute("PRAGMA foreign_keys = ON")
    return version


def _functions(conn: sqlite3.Connection) -> None:
    """The SQL functions migrations call: `cjk_has(text)` and `cjk_segmented(text)`
    (shared.content.cjk; NULL stays NULL)."""
    conn.create_function(
        "cjk_has", 1, lambda t: isinstance(t, str) and cjk.has_cjk(t), deterministic=True
    )
    conn.create_function(
        "cjk_segmented",
        1,
        lambda t: cjk.segmented(t) if isinstance(t, str) else t,
        deterministic=True,
    )


def _apply(conn: sqlite3.Connection, version: int, target: int | None) -> int:
    for m in migrations():
        if m.version <= version or (target is not None and m.version > target):
            continue
        applied_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        try:
            # executescript commits first; the whole file and its version row are one transaction.
            conn.executescript(
                f"BEGIN IMMEDIATE;\n{m.sql}\n;"
                f"INSERT INTO schema_version (version, name, applied_at)"
                f" VALUES ({m.version}, '{m.name}', '{applied_at}');\nCOMMIT;"
            )
        except sqlite3.Error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        log.info("database migrated to version %d (%s)", m.version, m.name)
        version = m.version
    return version
