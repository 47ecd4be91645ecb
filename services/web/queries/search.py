"""Full-text search (FTS5 over title, URL and extracted text) with composable filters.

User input never reaches FTS5 as syntax: it is split into words (letters and digits), and
each word becomes a quoted FTS5 string, so quotes, ``AND``/``OR``/``NOT``/``NEAR``, ``*``,
``-``, ``:``, parentheses and unbalanced input are all searched as plain words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Literal

from sqlalchemy import ColumnElement, Connection, Select, func, literal_column, select

from services.web.queries.links import Cursor, has_video, summary_columns, with_artifacts
from services.web.queries.schema import fts, link_metadata, links
from services.web.queries.visibility import listed, listed_at

MAX_WORDS = 12
MAX_WORD_CHARS = 64
TOTAL_CAP = 200
"""Matches counted at most; above it ``total`` is this number and ``total_capped`` true."""
MARK_OPEN, MARK_CLOSE = "\x02", "\x03"
"""Highlight markers in snippets (control characters that extracted text never keeps)."""

TEXT_COLUMN = 4
"""Snippets come from the archived text (column 4 of link_text_fts), not the title."""
_WORD = re.compile(r"\w+", re.UNICODE)
Sort = Literal["newest", "relevance"]


def fts_query(text: str, domain: str | None = None) -> str | None:
    """The FTS5 expression for what a person typed: every word must match; None if no word.

    A domain filter also narrows the match to documents whose ``domain`` column holds the
    domain's labels as a phrase (fast doclist intersection); the exact rule (that domain or a
    subdomain of it) is then checked on ``links.domain``."""
    words = [w[:MAX_WORD_CHARS] for w in _WORD.findall(text)][:MAX_WORDS]
    if not words:
        return None
    query = " ".join(f'"{w}"' for w in words)
    labels = _WORD.findall(domain or "")[:MAX_WORDS]
    if labels:
        query += ' domain : "' + " ".join(labels) + '"'
    return query


@dataclass(frozen=True)
class Filters:
    """Optional search filters; unset ones add nothing to the query."""

    domain: str | None = None
    status: str | None = None
    has_video: bool | None = None
    since: date | None = None
    until: date | None = None

    def clauses(self) -> list[ColumnElement[bool]]:
        """The WHERE clauses of the set filters."""
        out: list[ColumnElement[bool]] = [listed()]
        if self.domain:
            d = self.domain.lower()
            out.append((links.c.domain == d) | links.c.domain.endswith("." + d, autoescape=True))
        if self.status:
            out.append(links.c.status == self.status)
        if self.has_video is not None:
            video = has_video(links.c.id)
            out.append(video if self.has_video else ~video)
        if self.since:
            out.append(listed_at >= self.since.isoformat())
        if self.until:
            out.append(listed_at < (self.until + timedelta(days=1)).isoformat())
        return out


@dataclass(frozen=True)
class SearchPage:
    """One page of results."""

    results: list[dict[str, Any]]
    total: int
    total_capped: bool
    next: Cursor | int | None


def _base(match: str, filters: Filters) -> Select[Any]:
    return (
        select(
            *summary_columns(),
            func.snippet(literal_column("link_text_fts"), -1, MARK_OPEN, MARK_CLOSE, "…", 24).label(
                "snippet"
            ),
        )
        .select_from(
            fts.join(links, links.c.id == fts.c.rowid).outerjoin(
                link_metadata, link_metadata.c.link_id == links.c.id
            )
        )
        .where(literal_column("link_text_fts").op("MATCH")(match), *filters.clauses())
    )


def search(
    conn: Connection,
    text: str,
    filters: Filters,
    *,
    limit: int,
    sort: Sort = "newest",
    cursor: int | None = None,
    offset: int = 0,
) -> SearchPage:
    """Matching listed links: newest first (cursor = last link id) or by relevance (offset)."""
    match = fts_query(text, filters.domain)
    if match is None:
        return SearchPage([], 0, False, None)
    stmt = _base(match, filters)
    if sort == "relevance":
        stmt = stmt.order_by(literal_column("rank")).offset(offset)
    else:
        stmt = stmt.order_by(fts.c.rowid.desc())
        if cursor is not None:
            stmt = stmt.where(fts.c.rowid < cursor)
    rows = [dict(r) for r in conn.execute(stmt.limit(limit + 1)).mappings()]
    more = len(rows) > limit
    rows = with_artifacts(conn, rows[:limit])
    counted = (
        select(fts.c.rowid)
        .select_from(fts.join(links, links.c.id == fts.c.rowid))
        .where(literal_column("link_text_fts").op("MATCH")(match), *filters.clauses())
    )
    total = conn.execute(
        select(func.count()).select_from(counted.limit(TOTAL_CAP + 1).subquery())
    ).scalar_one()
    nxt: Cursor | int | None = None
    if more:
        nxt = offset + limit if sort == "relevance" else rows[-1]["id"]
    return SearchPage(rows, min(total, TOTAL_CAP), total > TOTAL_CAP, nxt)
