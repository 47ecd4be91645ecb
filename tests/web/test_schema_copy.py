"""The web's SQLAlchemy copy of the tables it reads (services/web/queries/schema.py) agrees
with the writer's migrations: every table, column, type and primary key it names exists so
in a database migrated to the latest version."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import Float, Integer, Table, Text

from services.web.queries.schema import metadata
from services.writer.db import open_db

AFFINITY = {Integer: "INTEGER", Text: "TEXT", Float: "REAL"}


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> sqlite3.Connection:
    path: Path = tmp_path_factory.mktemp("schema") / "archive.sqlite3"
    return open_db(path)


def declared(conn: sqlite3.Connection, table: str) -> dict[str, tuple[str, bool]]:
    """column -> (declared type, upper-case; part of the primary key) in the database."""
    return {
        row[1]: (str(row[2]).upper(), bool(row[5]))
        for row in conn.execute(f"PRAGMA table_info({table})").fetchall()
    }


@pytest.mark.parametrize("table", metadata.sorted_tables, ids=lambda t: t.name)
def test_the_web_reads_the_tables_the_migrations_made(
    migrated: sqlite3.Connection, table: Table
) -> None:
    columns = declared(migrated, table.name)
    assert columns, f"{table.name}: no such table after the migrations"
    virtual = all(kind == "" for kind, _ in columns.values())  # FTS5: columns without types
    for column in table.columns:
        if column.name == "rowid":  # SQLite's own key of a rowid (or FTS5) table
            continue
        assert column.name in columns, f"{table.name}.{column.name}: not in the migrations"
        kind, primary = columns[column.name]
        if virtual:
            continue
        want = AFFINITY[type(column.type)]
        assert want in kind, f"{table.name}.{column.name}: {kind} in SQLite, {want} here"
        assert column.primary_key == primary, f"{table.name}.{column.name}: primary key"
