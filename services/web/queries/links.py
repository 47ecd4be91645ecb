"""Links: the newest listed archives (cursor pages) and everything known about one link."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Select, case, exists, func, literal, or_, select

from services.web.queries.schema import (
    archive_artifacts,
    archive_jobs,
    archive_result_attempts,
    discourse_posts,
    fts,
    link_aliases,
    link_media,
    link_metadata,
    link_occurrences,
    links,
    media_items,
    snapshots,
)
from services.web.queries.visibility import listed, listed_at, public

VIDEO_KINDS = ("video",)
MEDIA_KINDS = ("video", "audio", "thumbnail", "subtitles")
"""The files of a video shown with it on the link page (info JSON: in Downloads only)."""
TEXT_CHARS = 200_000
"""The archived text shown on a link page at most (the full text is a download)."""


@dataclass(frozen=True)
class Cursor:
    """Where a page of the listing starts: strictly older than (listed_at, id)."""

    at: str
    link_id: int


def no_rows() -> list[dict[str, Any]]:
    """An empty result (what a read returns before the database exists)."""
    return []


error_code = case(
    (links.c.last_outcome.in_(("failed", "partial")), links.c.last_error_code), else_=None
)
"""The error code of the link's last attempt, when it did not fully succeed (the writer
records every ended attempt on its link: status, last_outcome, last_error_code, retry_at)."""


def quoted_of(link_id: Any) -> Any:
    """EXISTS: the link was posted inside a quote at least once."""
    return exists().where(link_occurrences.c.link_id == link_id, link_occurrences.c.in_quote == 1)


def has_video(link_id: Any) -> Any:
    """EXISTS: the link has a video artifact, or shows a video another link's job downloaded
    (the same video under another URL is downloaded once: ``link_media``)."""
    own = exists().where(
        archive_artifacts.c.link_id == link_id, archive_artifacts.c.kind.in_(VIDEO_KINDS)
    )
    shown = exists().where(
        link_media.c.link_id == link_id,
        media_items.c.id == link_media.c.media_id,
        media_items.c.status == "downloaded",
    )
    return or_(own, shown)


def downloaded_video_links(conn: Connection, link_ids: Iterable[int]) -> set[int]:
    """Which of these links show a downloaded video (``link_media``)."""
    ids = list(link_ids)
    if not ids:
        return set()
    stmt = (
        select(link_media.c.link_id)
        .join(media_items, media_items.c.id == link_media.c.media_id)
        .where(link_media.c.link_id.in_(ids), media_items.c.status == "downloaded")
    )
    return {int(i) for i in conn.execute(stmt).scalars()}


def videos(conn: Connection, link_id: int) -> list[dict[str, Any]]:
    """The videos the link shows (``link_media``), each with the files of its download."""
    stmt = (
        select(media_items)
        .join(link_media, link_media.c.media_id == media_items.c.id)
        .where(link_media.c.link_id == link_id)
        .order_by(media_items.c.id)
    )
    out = [dict(r) for r in conn.execute(stmt).mappings()]
    for video in out:
        files = (
            select(archive_artifacts)
            .where(
                archive_artifacts.c.snapshot_id == video["snapshot_id"],
                archive_artifacts.c.kind.in_(MEDIA_KINDS),
            )
            .order_by(archive_artifacts.c.id)
        )
        found = [dict(a) for a in conn.execute(files).mappings()] if video["snapshot_id"] else []
        video["files"] = found
        video["video"] = next((a for a in found if a["kind"] == "video"), None)
        video["thumbnail"] = next((a for a in found if a["kind"] == "thumbnail"), None)
        video["subtitles"] = [a for a in found if a["kind"] == "subtitles"]
    return out


def summary_columns() -> list[Any]:
    """The columns of a link in every list (home, search, exports, feed)."""
    return [
        links.c.id,
        links.c.canonical_url.label("url"),
        links.c.domain,
        links.c.status,
        links.c.first_seen_at,
        links.c.last_archived_at,
        listed_at.label("listed_at"),
        link_metadata.c.title,
        error_code.label("error_code"),
        links.c.last_outcome,
        links.c.retry_at,
        quoted_of(links.c.id).label("quoted"),
    ]


def summaries(*, status_index: bool = True) -> Select[Any]:
    """SELECT of listed links with their summary columns (add filters, order, limit)."""
    return (
        select(*summary_columns())
        .select_from(links.outerjoin(link_metadata, link_metadata.c.link_id == links.c.id))
        .where(listed(status_index=status_index))
    )


def recent_statement(limit: int, cursor: Cursor | None) -> Select[Any]:
    """The listing page query (limit + 1 rows: the extra one says there is a next page)."""
    stmt = summaries(status_index=False).order_by(listed_at.desc(), links.c.id.desc())
    stmt = stmt.limit(limit + 1)
    if cursor is not None:
        # (listed_at, id) < cursor, spelled so that the listing index serves it as a range
        at = literal(cursor.at)
        stmt = stmt.where(listed_at <= at, or_(listed_at < at, links.c.id < cursor.link_id))
    return stmt


def recent(conn: Connection, limit: int, cursor: Cursor | None) -> list[dict[str, Any]]:
    """The newest listed links, with their artifacts."""
    rows = [dict(r) for r in conn.execute(recent_statement(limit, cursor)).mappings()]
    return with_artifacts(conn, rows)


def artifacts_by_link(conn: Connection, link_ids: Iterable[int]) -> dict[int, list[dict[str, Any]]]:
    """Artifacts of these links, oldest first."""
    ids = list(link_ids)
    out: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    if not ids:
        return out
    stmt = (
        select(archive_artifacts)
        .where(archive_artifacts.c.link_id.in_(ids))
        .order_by(archive_artifacts.c.id)
    )
    for a in conn.execute(stmt).mappings():
        out[a["link_id"]].append(dict(a))
    return out


def with_artifacts(conn: Connection, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Attach each row's artifacts (one query for the page)."""
    by_link = artifacts_by_link(conn, (r["id"] for r in rows))
    shown = downloaded_video_links(conn, by_link)
    for r in rows:
        r["artifacts"] = by_link[r["id"]]
        r["video"] = r["id"] in shown or any(a["kind"] in VIDEO_KINDS for a in r["artifacts"])
    return rows


def detail(conn: Connection, link_id: int) -> dict[str, Any] | None:
    """Everything about one link, or None if there is none the public may see."""
    row = (
        conn.execute(
            select(
                links, error_code.label("error_code"), quoted_of(links.c.id).label("quoted")
            ).where(links.c.id == link_id, public())
        )
        .mappings()
        .first()
    )
    if row is None:
        return None
    link = dict(row)
    meta = (
        conn.execute(select(link_metadata).where(link_metadata.c.link_id == link_id))
        .mappings()
        .first()
    )
    link["metadata"] = dict(meta) if meta else {}
    link["title"] = link["metadata"].get("title")
    link["aliases"] = [
        dict(r)
        for r in conn.execute(
            select(
                link_aliases.c.url,
                link_aliases.c.original_url,
                link_aliases.c.reason,
                link_aliases.c.created_at,
            )
            .where(link_aliases.c.link_id == link_id)
            .order_by(link_aliases.c.id)
        ).mappings()
    ]
    link["occurrences"] = occurrences(conn, link_id)
    link["jobs"] = [
        dict(r)
        for r in conn.execute(
            select(archive_jobs)
            .where(archive_jobs.c.link_id == link_id)
            .order_by(archive_jobs.c.id.desc())
        ).mappings()
    ]
    link["artifacts"] = artifacts_by_link(conn, [link_id])[link_id]
    text = conn.execute(
        select(func.substr(fts.c.extracted_text, 1, TEXT_CHARS)).where(fts.c.rowid == link_id)
    ).scalar()
    link["text"] = text or None
    link["snapshots"] = snapshot_history(conn, link_id, link["artifacts"])
    link["videos"] = videos(conn, link_id)
    link["video"] = any(v["status"] == "downloaded" for v in link["videos"]) or any(
        a["kind"] in VIDEO_KINDS for a in link["artifacts"]
    )
    return link


def occurrences(conn: Connection, link_id: int) -> list[dict[str, Any]]:
    """Where the link was posted (provenance), oldest first."""
    stmt = (
        select(
            discourse_posts.c.post_url,
            discourse_posts.c.title.label("topic_title"),
            discourse_posts.c.author_username.label("author"),
            link_occurrences.c.in_quote,
            link_occurrences.c.context_snippet.label("snippet"),
            link_occurrences.c.seen_at,
            link_occurrences.c.original_url,
        )
        .select_from(
            link_occurrences.join(
                discourse_posts, discourse_posts.c.id == link_occurrences.c.discourse_post_id
            )
        )
        .where(link_occurrences.c.link_id == link_id)
        .order_by(link_occurrences.c.seen_at, link_occurrences.c.id)
        .limit(500)
    )
    return [dict(r) | {"in_quote": bool(r["in_quote"])} for r in conn.execute(stmt).mappings()]


def snapshot_history(
    conn: Connection, link_id: int, artifacts: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Every snapshot of the link, newest first, with every attempt's result of every hook
    and its artifacts."""
    snaps = [
        dict(r)
        for r in conn.execute(
            select(
                snapshots,
                archive_jobs.c.status.label("job_status"),
                archive_jobs.c.last_error,
                archive_jobs.c.attempts.label("job_attempts"),
            )
            .select_from(snapshots.outerjoin(archive_jobs, archive_jobs.c.id == snapshots.c.job_id))
            .where(snapshots.c.link_id == link_id)
            .order_by(snapshots.c.created_at.desc(), snapshots.c.id.desc())
            .limit(200)
        ).mappings()
    ]
    by_snap: dict[str, dict[str, Any]] = {s["id"]: s for s in snaps}
    for s in snaps:
        s["results"], s["artifacts"] = [], []
    if snaps:
        history = archive_result_attempts
        stmt = (
            select(history)
            .where(history.c.snapshot_id.in_(list(by_snap)))
            .order_by(history.c.hook, history.c.attempt, history.c.id)
        )
        for r in conn.execute(stmt).mappings():
            by_snap[r["snapshot_id"]]["results"].append(dict(r))
    for a in artifacts:
        if a["snapshot_id"] in by_snap:
            by_snap[a["snapshot_id"]]["artifacts"].append(a)
    return snaps


def newest_listed(conn: Connection, limit: int) -> list[dict[str, Any]]:
    """The newest listed links that were archived (the RSS feed)."""
    stmt = (
        summaries()
        .where(links.c.last_archived_at.is_not(None))
        .order_by(listed_at.desc(), links.c.id.desc())
        .limit(limit)
    )
    return with_artifacts(conn, [dict(r) for r in conn.execute(stmt).mappings()])


def export_batch(conn: Connection, after: int, size: int = 500) -> list[dict[str, Any]]:
    """Listed links with id > after, in id order, with metadata and artifacts."""
    cols = [c for c in link_metadata.c if c.name not in ("link_id", "title")]
    stmt = (
        summaries()
        .add_columns(*cols, links.c.original_url, links.c.final_url)
        .where(links.c.id > after)
        .order_by(links.c.id)
        .limit(size)
    )
    return with_artifacts(conn, [dict(r) for r in conn.execute(stmt).mappings()])


def artifact_row(conn: Connection, artifact_id: int) -> dict[str, Any] | None:
    """One artifact of a link the public may see."""
    stmt = (
        select(archive_artifacts)
        .select_from(archive_artifacts.join(links, links.c.id == archive_artifacts.c.link_id))
        .where(archive_artifacts.c.id == artifact_id, public())
    )
    row = conn.execute(stmt).mappings().first()
    return None if row is None else dict(row)


def exists_public(conn: Connection, link_id: int) -> bool:
    """True if the public may see this link."""
    return (
        conn.execute(select(links.c.id).where(links.c.id == link_id, public())).first() is not None
    )
