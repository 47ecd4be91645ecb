"""Is the original still there? A link's verdict and its evidence, the verdicts of a page of
links, newly gone links (/gone.xml) and gone links by platform (the stats). The writer keeps
them (services/writer/liveness/); times are stored as Unix seconds and shown here as ISO."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, func, literal_column, select
from sqlalchemy.orm import aliased

from services.web.queries.prepared import Prepared, param
from services.web.queries.schema import (
    links,
    liveness_observations,
    liveness_schedule,
    liveness_verdicts,
    liveness_words,
)
from services.web.queries.visibility import public
from shared.liveness.check_evidence import describe
from shared.messages import Answer

OBSERVATIONS_SHOWN = 100
"""Observations a link page and its JSON show at most (the newest)."""
ANSWERS: dict[int, Answer] = {0: "unknown", 1: "present", 2: "gone", 3: "gone"}


def iso(seconds: int | None) -> str | None:
    """Stored Unix seconds as ISO 8601 UTC."""
    if seconds is None:
        return None
    return datetime.fromtimestamp(int(seconds), UTC).isoformat().replace("+00:00", "Z")


_via, _reason, _words = (aliased(liveness_words) for _ in range(3))
_OBSERVATIONS = Prepared(
    select(
        liveness_observations.c.at,
        liveness_observations.c.answer,
        liveness_observations.c.status,
        liveness_observations.c.changed,
        _via.c.text.label("via"),
        _reason.c.text.label("reason"),
        _words.c.text.label("words"),
    )
    .select_from(
        liveness_observations.join(_via, _via.c.id == liveness_observations.c.via)
        .join(_reason, _reason.c.id == liveness_observations.c.reason)
        .outerjoin(_words, _words.c.id == liveness_observations.c.words)
    )
    .where(liveness_observations.c.link_id == param("link_id"))
    .order_by(liveness_observations.c.at.desc())
    .limit(OBSERVATIONS_SHOWN)
)
_VERDICT = Prepared(
    select(liveness_verdicts).where(liveness_verdicts.c.link_id == param("link_id"))
)
_NEXT = Prepared(
    select(liveness_schedule.c.due, liveness_schedule.c.state).where(
        liveness_schedule.c.link_id == param("link_id")
    )
)


def observation(row: dict[str, Any]) -> dict[str, Any]:
    """One check as shown: when, the answer, its evidence, in words too."""
    code = int(row["answer"])
    answer = ANSWERS[code]
    words = row["words"] or ""
    return {
        "at": iso(row["at"]),
        "answer": answer,
        "tombstone": code == 3,
        "status": row["status"],
        "via": row["via"],
        "reason": row["reason"],
        "words": words or None,
        "summary": describe(answer, row["reason"], row["status"], words, code == 3),
        "changed": None if row["changed"] is None else bool(row["changed"]),
    }


def source_status(conn: Connection, link_id: int) -> dict[str, Any]:
    """The link's `source_status`: its verdict, its newest observations, when it is checked
    next (state `unknown` with no observation: not checked yet)."""
    verdict = _VERDICT.first(conn, link_id=link_id)
    nxt = _NEXT.first(conn, link_id=link_id)
    found = [observation(r) for r in _OBSERVATIONS.rows(conn, link_id=link_id)]
    return {
        "state": verdict["state"] if verdict else "unknown",
        "since": iso(verdict["since"]) if verdict else None,
        "reason": verdict["reason"] if verdict else None,
        "tombstone": bool(verdict and verdict["tombstone"]),
        "last_checked_at": iso(verdict["checked"]) if verdict else None,
        "edited": bool(verdict and verdict["edited"]),
        "next_check_at": iso(nxt["due"]) if nxt and nxt["state"] == 0 else None,
        "observations": found,
    }


_VERDICTS = Prepared(
    select(
        liveness_verdicts.c.link_id,
        liveness_verdicts.c.state,
        liveness_verdicts.c.since,
        liveness_verdicts.c.reason,
        liveness_verdicts.c.tombstone,
        liveness_verdicts.c.edited,
    ).where(
        liveness_verdicts.c.link_id.in_(
            select(literal_column("value")).select_from(func.json_each(param("ids")))
        )
    )
)


def short(row: dict[str, Any]) -> dict[str, Any]:
    """A verdict as lists show it."""
    return {
        "state": row["state"],
        "since": iso(row["since"]),
        "reason": row["reason"],
        "tombstone": bool(row["tombstone"]),
        "edited": bool(row["edited"]),
    }


def verdicts_of(conn: Connection, link_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """The verdicts of these links (those checked), by id."""
    ids = list(link_ids)
    if not ids:
        return {}
    return {int(r["link_id"]): short(r) for r in _VERDICTS.rows(conn, ids=json.dumps(ids))}


def gone_by_platform(conn: Connection) -> dict[str, int]:
    """Links whose originals are gone, by platform (x, reddit ..., web)."""
    stmt = (
        select(liveness_verdicts.c.platform, func.count().label("n"))
        .select_from(liveness_verdicts.join(links, links.c.id == liveness_verdicts.c.link_id))
        .where(liveness_verdicts.c.state == "gone", public())
        .group_by(liveness_verdicts.c.platform)
        .order_by(func.count().desc(), liveness_verdicts.c.platform)
    )
    return {str(r.platform): int(r.n) for r in conn.execute(stmt)}
