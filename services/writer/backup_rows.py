"""Which rows of a database copy a backup treats apart: the rows of taken-down links (left
out of the publishable copy), the private rows (left out or blanked there), and the rows of
the links whose takedown can still be undone (kept, with the private rows, in the private
part). One answer each, asked by ``backup.py`` when it makes both files and restores them.

Every answer is a WHERE clause per table, for the tables a copy actually has (a backup may
be restored from an older schema), read from the copy itself (`columns`).
"""

from __future__ import annotations

import sqlite3

from shared.session_files import SESSION_KINDS

PRIVATE_TABLES = ("admin_audit", "s3_removals", "takedown_holds")
"""Tables the public never sees: emptied in every backup, kept whole in its private part."""


BLANKED = {"excluded_domains": "reason = '', admin = ''"}
"""Tables whose private rows stay in the publishable copy with these columns blanked."""

Where = tuple[str, list[str]]
"""A WHERE clause and its parameters."""


def columns(conn: sqlite3.Connection, schema: str) -> dict[str, set[str]]:
    """The tables of a schema (ordinary and virtual: not the full-text indexes' own shadow
    tables, which follow their virtual table) and their columns."""
    tables = [
        str(r[1])
        for r in conn.execute(f"PRAGMA {schema}.table_list")
        if r[2] in ("table", "virtual") and not str(r[1]).startswith("sqlite_")
    ]
    return {
        t: {str(c[1]) for c in conn.execute(f'PRAGMA {schema}.table_info("{t}")')} for t in tables
    }


def virtual_tables(conn: sqlite3.Connection, schema: str) -> set[str]:
    """The full-text tables of a schema: their rowid is data (a link's id, an order), so a
    copy of their rows names it."""
    return {str(r[1]) for r in conn.execute(f"PRAGMA {schema}.table_list") if r[2] == "virtual"}


def link_rows(columns: dict[str, set[str]], links: str, schema: str = "main") -> dict[str, str]:
    """Every row of the links `links` (a SELECT of link ids), per table, in an order that
    deletes safely: the rows of their snapshots (hook results, attempts, timestamps), the
    rows that name the link (artifacts, metadata, search text, occurrences, posts, evidence,
    jobs, liveness, ...), then the links' own rows. What a takedown hides is all of it."""
    rows: dict[str, str] = {}
    if "snapshots" in columns:
        snapshots = f'SELECT id FROM {schema}."snapshots" WHERE link_id IN ({links})'
        for table, cols in columns.items():
            if "snapshot_id" in cols and "link_id" not in cols:
                rows[table] = f"snapshot_id IN ({snapshots})"
    for table, cols in columns.items():
        if table != "links" and "link_id" in cols:
            rows[table] = f"link_id IN ({links})"
    if "links" in columns:
        rows["links"] = f"id IN ({links})"
    return rows


def taken_down_rows(columns: dict[str, set[str]]) -> dict[str, str]:
    """The rows of every taken-down link: none of them is in the publishable copy."""
    if "taken_down_at" not in columns.get("links", set()):
        return {}
    return link_rows(columns, 'SELECT id FROM main."links" WHERE taken_down_at IS NOT NULL')


def private_rows(columns: dict[str, set[str]], schema: str = "main") -> dict[str, Where]:
    """The private rows of a copy (attached as `schema`), whoever the link: the private
    tables', the private session files of logged-in captures (their rows, which name their S3
    keys), who excluded a domain and why. The publishable copy leaves them out or blanks
    them."""
    rows: dict[str, Where] = {table: ("1", []) for table in PRIVATE_TABLES if table in columns}
    if "private_session" in columns.get("snapshots", set()):
        rows["archive_artifacts"] = (
            f"kind IN ({', '.join('?' for _ in SESSION_KINDS)}) AND snapshot_id IN"
            f' (SELECT id FROM {schema}."snapshots" WHERE private_session = 1)',
            sorted(SESSION_KINDS),
        )
    if "excluded_domains" in columns:
        rows["excluded_domains"] = ("1", [])
    return rows


def private_part_rows(columns: dict[str, set[str]], schema: str) -> dict[str, Where]:
    """What the private part of a copy (attached as `schema`) keeps: the private rows, and
    every row of each link whose takedown can still be undone (``takedown_holds``), so that
    a database restored from the backup shows it again exactly as before on an undo."""
    rows = private_rows(columns, schema)
    if "takedown_holds" not in columns:
        return rows
    held = link_rows(columns, f'SELECT link_id FROM {schema}."takedown_holds"', schema)
    for table, where in held.items():
        if table in rows:
            mine, args = rows[table]
            rows[table] = (f"({mine}) OR ({where})", args)
        else:
            rows[table] = (where, [])
    return rows
