"""What the admin routes read of the liveness checks (`dla check`, `dla status`)."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

from shared.links.canonical import RejectedUrl
from shared.links.policy import DomainPolicy
from shared.links.submission import check_submission


def find_link(conn: sqlite3.Connection, given: str, policy: DomainPolicy) -> int | None:
    """The public link a `dla check` argument names: its id, or a URL of it (normalized,
    canonical, or any alias it has)."""
    given = given.strip()
    if given.isdigit():
        row = conn.execute(
            "SELECT id FROM links WHERE id = ? AND taken_down_at IS NULL", (int(given),)
        ).fetchone()
        return None if row is None else int(row[0])
    forms = [given]
    checked = check_submission(given, policy)
    if not isinstance(checked, RejectedUrl):
        forms += [checked.normalized, checked.canonical]
    for url in forms:
        row = (
            conn.execute(
                "SELECT id FROM links WHERE (normalized_url = ? OR canonical_url = ?)"
                " AND taken_down_at IS NULL LIMIT 1",
                (url, url),
            ).fetchone()
            or conn.execute(
                "SELECT l.id FROM link_aliases a JOIN links l ON l.id = a.link_id"
                " WHERE a.url = ? AND l.taken_down_at IS NULL",
                (url,),
            ).fetchone()
        )
        if row is not None:
            return int(row[0])
    return None


def liveness_counts(conn: sqlite3.Connection, now: datetime) -> dict[str, Any]:
    """Checks of the originals: links watched, checks due now and out, the last day's
    answers (the newest of each link checked in it), verdicts by state."""
    t = int(now.timestamp())
    watched = conn.execute("SELECT count(*) FROM liveness_schedule").fetchone()[0]
    due = conn.execute("SELECT count(*) FROM liveness_schedule WHERE due <= ?", (t,)).fetchone()[0]
    out = conn.execute("SELECT count(*) FROM liveness_schedule WHERE state > 0").fetchone()[0]
    answers = {0: "unknown", 1: "present", 2: "gone", 3: "gone"}
    done: dict[str, int] = {}
    for code, n in conn.execute(
        "SELECT answer, count(*) FROM liveness_verdicts WHERE checked >= ? GROUP BY answer",
        (t - 86400,),
    ):
        done[answers[int(code)]] = done.get(answers[int(code)], 0) + int(n)
    states = dict(conn.execute("SELECT state, count(*) FROM liveness_verdicts GROUP BY state"))
    return {
        "watched": int(watched or 0),
        "due": int(due or 0),
        "running": int(out),
        "checked_last_day": done,
        "verdicts": states,
    }
