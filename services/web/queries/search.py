"""Full-text search (FTS5 over title, URL and extracted text) with composable filters, and
over older captures' texts (a separate index, read only for a results page's first page).

User input never reaches FTS5 as syntax: it is split into words (letters and digits), and
each word becomes a quoted FTS5 string, so quotes, ``AND``/``OR``/``NOT``/``NEAR``, ``*``,
``-``, ``:``, parentheses and unbalanced input are all searched as plain words.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cache
from typing import Any, Literal

from sqlalchemy import ColumnElement, Connection, exists, func, literal_column, select

from services.web.queries.links import (
    Cursor,
    has_video,
    posted_on,
    summary_columns,
    with_artifacts,
)
from services.web.queries.prepared import Prepared, param
from services.web.queries.schema import fts, link_metadata, links, liveness_verdicts, text_history
from services.web.queries.visibility import listed, listed_at
from services.web.queries.words import word
from shared.content.cjk import has_cjk, segmented
from shared.links.domains import public_suffix

MAX_WORDS = 12
MAX_WORD_CHARS = 64
TOTAL_CAP = 200
"""Matches counted at most; above it ``total`` is this number and ``total_capped`` true."""
MARK_OPEN, MARK_CLOSE = "\x02", "\x03"
"""Highlight markers in snippets (control characters that extracted text never keeps)."""

Sort = Literal["newest", "relevance"]
Shape = tuple[bool, bool, bool | None, bool, bool, bool, bool]
"""Which filters are set: domain, status, video (yes/no/any), since, until, source status,
forum."""
SOURCE_STATES = ("present", "gone", "unknown")
OLDER_SHOWN = 10
"""Links found only in older captures shown on a results page at most."""


def domain_phrase(domain: str) -> str | None:
    """The words of a domain filter that narrow FTS5 to its documents: the labels in front
    of the public suffix (``news bbc`` for ``news.bbc.co.uk``), or every label when the
    filter is a suffix itself or an IP address. A top-level domain the suffix list does not
    know (``.example``, ``.internal``) is still one: the last label.

    Suffix labels (``com``, ``co uk``) are in a large share of all documents; matching them
    as part of the phrase means reading their huge position lists, which made a filtered
    search 10-50 times slower than the same search unfiltered. Leaving them out keeps the
    narrowing correct (a superset: the exact rule is then checked on ``links.domain``)."""
    labels = [label for label in domain.split(".") if word().search(label)]
    if not all(label.isdigit() for label in labels):
        suffix = public_suffix(".".join(labels))
        own = labels[: len(labels) - (suffix.count(".") + 1 if suffix else 1)]
        labels = own or labels
    words = word().findall(" ".join(labels))[:MAX_WORDS]
    return " ".join(words) if words else None


def fts_query(text: str, domain: str | None = None) -> str | None:
    """The FTS5 expression for what a person typed: every word must match; None if no word.

    A domain filter also narrows the match to documents whose ``domain`` column holds the
    domain's own labels as a phrase (``domain_phrase``: fast doclist intersection); the
    exact rule (that domain or a subdomain of it) is then checked on ``links.domain``."""
    words = [w[:MAX_WORD_CHARS] for w in word().findall(text)][:MAX_WORDS]
    if not words:
        return None
    # a word of Chinese, Japanese or Korean characters is a phrase of them, as they are
    # indexed (shared.content.cjk): "ニュース" finds 日本語のニュース
    query = " ".join(f'"{segmented(w, " ")}"' for w in words)
    phrase = domain_phrase(domain or "")
    if phrase:
        query += f' domain : "{phrase}"'
    return query


@dataclass(frozen=True)
class Filters:
    """Optional search filters; unset ones add nothing to the query."""

    domain: str | None = None
    status: str | None = None
    has_video: bool | None = None
    since: date | None = None
    until: date | None = None
    source_status: str | None = None
    """present, gone or unknown: the verdict on the original (links checked at least once)."""
    forum: str | None = None
    """Only links posted on this forum (``shared.discourse.forum_of``)."""

    def shape(self) -> Shape:
        """Which filters are set (a search statement is built once per shape)."""
        return (
            bool(self.domain),
            bool(self.status),
            self.has_video,
            self.since is not None,
            self.until is not None,
            bool(self.source_status),
            bool(self.forum),
        )

    def values(self) -> dict[str, Any]:
        """The values of the set filters' parameters (see ``clauses``)."""
        out: dict[str, Any] = {}
        if self.domain:
            d = self.domain.lower()
            out |= {"domain": d, "domain_tail": "." + d, "domain_tail_from": -(len(d) + 1)}
        if self.status:
            out["status"] = self.status
        if self.since:
            out["since"] = self.since.isoformat()
        if self.until:
            out["until"] = (self.until + timedelta(days=1)).isoformat()
        if self.source_status:
            out["source_status"] = self.source_status
        if self.forum:
            out["forum"] = self.forum
        return out


def clauses(shape: Shape) -> list[ColumnElement[bool]]:
    """The WHERE clauses of the filters a shape sets, with named parameters."""
    domain, status, video, since, until, source, forum = shape
    out: list[ColumnElement[bool]] = [listed()]
    if domain:  # that domain, or a name under it (no LIKE: nothing in the value is special)
        tail = func.substr(links.c.domain, param("domain_tail_from", integer=True))
        out.append((links.c.domain == param("domain")) | (tail == param("domain_tail")))
    if status:
        out.append(links.c.status == param("status"))
    if video is not None:
        out.append(has_video(links.c.id) if video else ~has_video(links.c.id))
    if since:
        out.append(listed_at >= param("since"))
    if until:
        out.append(listed_at < param("until"))
    if source:
        out.append(
            exists().where(
                liveness_verdicts.c.link_id == links.c.id,
                liveness_verdicts.c.state == param("source_status"),
            )
        )
    if forum:
        out.append(posted_on(param("forum")))
    return out


@dataclass(frozen=True)
class SearchPage:
    """One page of results."""

    results: list[dict[str, Any]]
    total: int
    total_capped: bool
    next: Cursor | int | None
    older: list[dict[str, Any]] = field(default_factory=list)
    """Links only an older capture of which holds the words (first pages, when asked)."""


MATCH = literal_column("link_text_fts").op("MATCH")(param("match"))
SNIPPET_TOKENS = 24
"""Tokens a snippet shows: words, or for a search in a script written without spaces (one
token a character there: shared.content.cjk) CJK_SNIPPET_TOKENS characters."""
CJK_SNIPPET_TOKENS = 64
SNIPPET_TOKENS_PARAM = param("snippet_tokens", integer=True)


def snippet_tokens(text: str) -> int:
    """How many tokens the snippets of a search for `text` show."""
    return CJK_SNIPPET_TOKENS if has_cjk(text) else SNIPPET_TOKENS


@cache
def page_query(shape: Shape, sort: Sort, after: bool) -> Prepared:
    """A page of matches (values: ``match``, the filters', ``limit``, and ``cursor`` for
    newest-first pages after the first or ``offset`` by relevance)."""
    snippet = func.snippet(
        literal_column("link_text_fts"), -1, MARK_OPEN, MARK_CLOSE, "…", SNIPPET_TOKENS_PARAM
    )
    stmt = (
        select(*summary_columns(), snippet.label("snippet"))
        .select_from(
            fts.join(links, links.c.id == fts.c.rowid).outerjoin(
                link_metadata, link_metadata.c.link_id == links.c.id
            )
        )
        .where(MATCH, *clauses(shape))
        .limit(param("limit", integer=True))
    )
    if sort == "relevance":
        stmt = stmt.order_by(literal_column("rank")).offset(param("offset", integer=True))
    else:
        stmt = stmt.order_by(fts.c.rowid.desc())
        if after:
            stmt = stmt.where(fts.c.rowid < param("cursor", integer=True))
    return Prepared(stmt)


@cache
def count_query(shape: Shape) -> Prepared:
    """How many listed links match, counted up to TOTAL_CAP + 1.

    Any TOTAL_CAP + 1 matches make the cap, so the direction the doclist is read in changes
    nothing but the time: newest first when only ``since`` is set (the matches it keeps
    are the newest: reading from the oldest first went through half a common word's
    doclist on a million links, 250 ms), oldest first otherwise (``until`` keeps the
    oldest)."""
    _, _, _, since, until, _, _ = shape
    matches = (
        select(fts.c.rowid)
        .select_from(fts.join(links, links.c.id == fts.c.rowid))
        .where(MATCH, *clauses(shape))
        .limit(TOTAL_CAP + 1)
    )
    if since and not until:
        matches = matches.order_by(fts.c.rowid.desc())
    return Prepared(select(func.count()).select_from(matches.subquery()))


def search(
    conn: Connection,
    text: str,
    filters: Filters,
    *,
    limit: int,
    sort: Sort = "newest",
    cursor: int | None = None,
    offset: int = 0,
    artifacts: bool = False,
    older: bool = False,
) -> SearchPage:
    """Matching listed links: newest first (cursor = last link id) or by relevance (offset).
    ``artifacts`` attaches each result's artifacts and video flag (the page's badges);
    ``older``, on a first page, also the links only an older capture of which matches."""
    match = fts_query(text, filters.domain)
    if match is None:
        if (filters.source_status or filters.forum) and sort == "newest":
            return _listing(conn, filters, limit, cursor, artifacts)
        return SearchPage([], 0, False, None)
    shape = filters.shape()
    values = filters.values() | {"match": match}
    after = sort != "relevance" and cursor is not None
    rows = page_query(shape, sort, after).rows(
        conn,
        **values,
        snippet_tokens=snippet_tokens(text),
        limit=limit + 1,
        offset=offset,
        cursor=cursor,
    )
    more = len(rows) > limit
    rows = rows[:limit]
    if artifacts:
        rows = with_artifacts(conn, rows)
    total = int(count_query(shape).scalar(conn, **values))
    nxt: Cursor | int | None = None
    if more:
        nxt = offset + limit if sort == "relevance" else rows[-1]["id"]
    found = []
    if older and cursor is None and offset == 0:
        found = older_captures(conn, text, filters, artifacts=artifacts)
    return SearchPage(rows, min(total, TOTAL_CAP), total > TOTAL_CAP, nxt, found)


@cache
def listing_query(shape: Shape, after: bool) -> Prepared:
    """Listed links matching the filters alone, newest link first (no words: a source status
    or forum filter lists every link whose original has that verdict, posted there)."""
    stmt = (
        select(*summary_columns(), literal_column("NULL").label("snippet"))
        .select_from(links.outerjoin(link_metadata, link_metadata.c.link_id == links.c.id))
        .where(*clauses(shape))
        .order_by(links.c.id.desc())
        .limit(param("limit", integer=True))
    )
    if after:
        stmt = stmt.where(links.c.id < param("cursor", integer=True))
    return Prepared(stmt)


def _listing(
    conn: Connection, filters: Filters, limit: int, cursor: int | None, artifacts: bool
) -> SearchPage:
    shape = filters.shape()
    query = listing_query(shape, cursor is not None)
    rows = query.rows(conn, **filters.values(), limit=limit + 1, cursor=cursor)
    more = len(rows) > limit
    rows = rows[:limit]
    if artifacts:
        rows = with_artifacts(conn, rows)
    total = int(listing_count(shape).scalar(conn, **filters.values()))
    return SearchPage(
        rows, min(total, TOTAL_CAP), total > TOTAL_CAP, rows[-1]["id"] if more else None
    )


@cache
def listing_count(shape: Shape) -> Prepared:
    """How many listed links match the filters alone, counted up to TOTAL_CAP + 1."""
    matches = select(links.c.id).where(*clauses(shape)).limit(TOTAL_CAP + 1)
    return Prepared(select(func.count()).select_from(matches.subquery()))


HISTORY_MATCH = literal_column("link_text_history").op("MATCH")(param("words"))


@cache
def older_query(shape: Shape) -> Prepared:
    """Listed links whose older captures' texts match the words and whose newest text does
    not, the newest older text first (values: ``words``, the filters', ``limit``)."""
    snippet = func.snippet(
        literal_column("link_text_history"), 3, MARK_OPEN, MARK_CLOSE, "…", SNIPPET_TOKENS_PARAM
    )
    newest_has_it = exists().where(
        fts.c.rowid == text_history.c.link_id,
        literal_column("link_text_fts").op("MATCH")(param("words")),
    )
    stmt = (
        select(
            *summary_columns(),
            text_history.c.snapshot_id.label("older_snapshot_id"),
            text_history.c.captured_at.label("older_captured_at"),
            snippet.label("snippet"),
        )
        .select_from(
            text_history.join(links, links.c.id == text_history.c.link_id).outerjoin(
                link_metadata, link_metadata.c.link_id == links.c.id
            )
        )
        .where(HISTORY_MATCH, *clauses(shape), ~newest_has_it)
        .order_by(text_history.c.rowid.desc())
        .limit(param("limit", integer=True))
    )
    return Prepared(stmt)


def older_captures(
    conn: Connection, text: str, filters: Filters, *, artifacts: bool = False
) -> list[dict[str, Any]]:
    """Links only an older capture of which holds every word (one row per link: the newest
    such capture, `older_snapshot_id` and `older_captured_at`)."""
    words = fts_query(text)
    if words is None:
        return []
    rows = older_query(filters.shape()).rows(
        conn,
        **filters.values(),
        words=words,
        snippet_tokens=snippet_tokens(text),
        limit=OLDER_SHOWN * 3,
    )
    seen: set[int] = set()
    kept = []
    for r in rows:
        if r["id"] not in seen:
            seen.add(r["id"])
            kept.append(r)
    kept = kept[:OLDER_SHOWN]
    return with_artifacts(conn, kept) if artifacts else kept
