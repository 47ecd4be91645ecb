"""Older captures' texts (`link_text_history`, written here only): every capture stays
searchable.

`link_text_fts` holds each link's newest text (the readable hook's `Text`, a platform post's
words). When a capture's text replaces a different one there, the one replaced is kept here
with the capture that held it and when, so a search can find words only an older capture
holds and say which. It is its own full-text index, read only when the search asks it, so
the hot search over the newest texts stays as it was (docs/benchmarks.md).
"""

from __future__ import annotations

import re
import sqlite3

from shared.content.cjk import unsegmented

_SPACE = re.compile(r"\s+")
COLUMNS = ("extracted_text", "post_text")
"""The columns of link_text_fts whose replaced texts are kept."""


def _same(a: str, b: str) -> bool:
    """Whether two texts differ only in spacing (the index's zero-width spaces included:
    shared.content.cjk)."""
    return _SPACE.sub(" ", unsegmented(a)).strip() == _SPACE.sub(" ", unsegmented(b)).strip()


def _holder(
    conn: sqlite3.Connection, link_id: int, column: str, snapshot_id: str
) -> tuple[str, str] | None:
    """The capture (snapshot id, when) whose text the link's `column` holds now, when it is
    another capture than `snapshot_id` (None when it is that one, or unknown)."""
    if column == "post_text":
        row = conn.execute(
            "SELECT p.snapshot_id, s.created_at FROM link_posts p"
            " JOIN snapshots s ON s.id = p.snapshot_id WHERE p.link_id = ?",
            (link_id,),
        ).fetchone()
    else:
        row = conn.execute(
            "SELECT s.id, s.created_at FROM archive_artifacts a"
            " JOIN snapshots s ON s.id = a.snapshot_id WHERE a.link_id = ? AND a.kind = 'text'"
            " ORDER BY a.id DESC LIMIT 1",
            (link_id,),
        ).fetchone()
    if row is None or row[0] == snapshot_id:
        return None
    return str(row[0]), str(row[1])


def keep_replaced(
    conn: sqlite3.Connection, link_id: int, column: str, text: str, snapshot_id: str
) -> bool:
    """Capture `snapshot_id` is about to set the link's `column` to `text`: keep the text it
    replaces when it differs and an older capture held it. True when one was kept."""
    if column not in COLUMNS:
        raise ValueError(column)
    row = conn.execute(f"SELECT {column} FROM link_text_fts WHERE rowid = ?", (link_id,))
    found = row.fetchone()
    old = str(found[0] or "") if found else ""
    if not old.strip() or _same(old, text):
        return False
    holder = _holder(conn, link_id, column, snapshot_id)
    if holder is None:
        return False
    conn.execute(
        "INSERT INTO link_text_history (link_id, snapshot_id, captured_at, text)"
        " VALUES (?, ?, ?, ?)",
        (link_id, holder[0], holder[1], old),
    )
    return True


def move_to_link(conn: sqlite3.Connection, loser: int, survivor: int) -> None:
    """Dedup merged `loser` into `survivor`: its older texts are the survivor's."""
    conn.execute("UPDATE link_text_history SET link_id = ? WHERE link_id = ?", (survivor, loser))


def forget(conn: sqlite3.Connection, link_id: int) -> None:
    """A takedown: the link's older texts go with the rest."""
    conn.execute("DELETE FROM link_text_history WHERE link_id = ?", (link_id,))
