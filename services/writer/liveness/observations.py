"""The observations (`liveness_observations` and its words, `liveness_words`; written here
only): one compact row per liveness check, with its evidence.

A row is the link, the time, the answer as a code (0 unknown, 1 present, 2 gone, 3 gone by
the platform's own tombstone), the HTTP status, and three words by id: how it was asked
(`http`, `x:syndication`), the reason word (`not_found`, `removed`, `rate_limited`), and the
platform's own words or the error. Words repeat across links and checks, so each is stored
once: an observation costs ~30 bytes (docs/benchmarks.md), a million links checked for years
stay small. The primary key (link, time) is the table's order, so a link's observations are
one range read.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from services.writer.liveness.verdict import Observation
from shared.liveness.check_evidence import CheckEvidence, describe
from shared.messages import LivenessResult
from shared.platforms.outcome import Answer

UNKNOWN, PRESENT, GONE, TOMBSTONE = 0, 1, 2, 3
ANSWERS: dict[int, Answer] = {
    UNKNOWN: "unknown",
    PRESENT: "present",
    GONE: "gone",
    TOMBSTONE: "gone",
}


def code(answer: Answer, tombstone: bool) -> int:
    """The stored code of an answer."""
    if answer == "gone":
        return TOMBSTONE if tombstone else GONE
    return PRESENT if answer == "present" else UNKNOWN


@dataclass(frozen=True)
class Stored:
    """One observation as read back: when, its evidence, whether the text had changed."""

    at: datetime
    evidence: CheckEvidence
    changed: bool | None

    @property
    def answer(self) -> Answer:
        return self.evidence.answer

    def observation(self) -> Observation:
        """As the verdict rule reads it, with its evidence in words."""
        e = self.evidence
        said = describe(e.answer, e.reason, e.status, e.words, e.tombstone)
        return Observation(self.at, e.answer, e.tombstone, said)


def word_id(conn: sqlite3.Connection, text: str) -> int:
    """The id of a word (stored once)."""
    row = conn.execute("SELECT id FROM liveness_words WHERE text = ?", (text,)).fetchone()
    if row is not None:
        return int(row[0])
    cur = conn.execute("INSERT INTO liveness_words (text) VALUES (?)", (text,))
    assert cur.lastrowid is not None
    return int(cur.lastrowid)


def record(conn: sqlite3.Connection, link_id: int, result: LivenessResult) -> None:
    """Keep one check's answer (two checks of a link within one second are one observation:
    the later answer's)."""
    conn.execute(
        "INSERT INTO liveness_observations (link_id, at, answer, status, via, reason, words,"
        " changed) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (link_id, at) DO UPDATE SET"
        " answer = excluded.answer, status = excluded.status, via = excluded.via,"
        " reason = excluded.reason, words = excluded.words, changed = excluded.changed",
        (
            link_id,
            int(result.checked_at.timestamp()),
            code(result.answer, result.tombstone),
            result.status,
            word_id(conn, result.via),
            word_id(conn, result.reason),
            word_id(conn, result.words) if result.words else None,
            None if result.changed is None else int(result.changed),
        ),
    )


READ = (
    "SELECT o.at, o.answer, o.status, v.text, r.text, w.text, o.changed"
    " FROM liveness_observations o JOIN liveness_words v ON v.id = o.via"
    " JOIN liveness_words r ON r.id = o.reason LEFT JOIN liveness_words w ON w.id = o.words"
    " WHERE o.link_id = ? ORDER BY o.at"
)
"""A link's observations, oldest first, with their words (the web reads the same)."""


def stored(row: Any) -> Stored:
    """One row of READ."""
    t, answer, status, via, reason, words, changed = row
    return Stored(
        at=datetime.fromtimestamp(int(t), UTC),
        evidence=CheckEvidence(
            answer=ANSWERS[int(answer)],
            tombstone=int(answer) == TOMBSTONE,
            status=status,
            via=str(via),
            reason=str(reason),
            words=str(words or ""),
        ),
        changed=None if changed is None else bool(changed),
    )


def of_link(conn: sqlite3.Connection, link_id: int) -> list[Stored]:
    """Every observation of the link, oldest first."""
    return [stored(r) for r in conn.execute(READ, (link_id,))]


def move_to_link(conn: sqlite3.Connection, loser: int, survivor: int) -> None:
    """Dedup merged `loser` into `survivor`: its observations are the survivor's too (one of
    the same second as one of the survivor's is dropped)."""
    conn.execute(
        "UPDATE OR IGNORE liveness_observations SET link_id = ? WHERE link_id = ?",
        (survivor, loser),
    )
    conn.execute("DELETE FROM liveness_observations WHERE link_id = ?", (loser,))
