"""Whether a takedown can be undone now: the one rule, asked by the writer when it applies
``cmd.undo`` and by the admin console and API before they send it (read-only SQL)."""

from __future__ import annotations

import sqlite3
from datetime import datetime


def undo_refusal(conn: sqlite3.Connection, link_id: int, now: datetime) -> str | None:
    """Why the takedown of this link cannot be undone at `now`, in words; None when it can
    (the link is taken down and its undo window, ``takedown_holds.purge_after``, is open)."""
    link = conn.execute("SELECT taken_down_at FROM links WHERE id = ?", (link_id,)).fetchone()
    hold = conn.execute(
        "SELECT purge_after FROM takedown_holds WHERE link_id = ?", (link_id,)
    ).fetchone()
    if link is not None and link[0] is None:
        return f"link {link_id} is not taken down"
    if hold is None:
        if link is None:
            return f"no link {link_id}"
        return (
            f"link {link_id} cannot be undone: its undo window ended and what was captured"
            " of it was purged"
        )
    purge_after = str(hold[0])
    if datetime.fromisoformat(purge_after.replace("Z", "+00:00")) <= now:
        return (
            f"link {link_id} cannot be undone: its undo window (TAKEDOWN_UNDO_DAYS) ended at"
            f" {purge_after}; what was captured of it is being purged"
        )
    if link is None:
        return (
            f"link {link_id} cannot be undone: this database was restored from a backup made"
            " while it was taken down whose private part holds none of its rows (made before"
            " it kept them, or restored without it); its objects are kept"
            f" until {purge_after}, then purged"
        )
    return None
