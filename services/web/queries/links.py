"""Links: the newest listed archives (cursor pages) and everything known about one link."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import (
    Connection,
    Select,
    and_,
    case,
    exists,
    func,
    literal_column,
    or_,
    select,
)

from services.web.queries import external_archives, link_evidence
from services.web.queries.liveness import source_status, verdicts_of
from services.web.queries.prepared import Prepared, param
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
    link_posts,
    links,
    liveness_verdicts,
    media_items,
    snapshots,
)
from services.web.queries.visibility import listed, listed_at, public
from shared.content.cjk import unsegmented
from shared.session_files import SESSION_KINDS

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


def posted_on(forum: Any) -> Any:
    """EXISTS: the link was posted on this forum (``discourse_posts.forum``)."""
    return exists().where(
        link_occurrences.c.link_id == links.c.id,
        discourse_posts.c.id == link_occurrences.c.discourse_post_id,
        discourse_posts.c.forum == forum,
    )


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


def _ids(name: str) -> Any:
    """``SELECT value FROM json_each(:name)``: the ids given as one JSON array, so the
    statement's text is the same whatever their number (``IN (?, ?, ...)`` would not be)."""
    return select(literal_column("value")).select_from(func.json_each(param(name)))


_DOWNLOADED_VIDEO_LINKS = Prepared(
    select(link_media.c.link_id)
    .join(media_items, media_items.c.id == link_media.c.media_id)
    .where(link_media.c.link_id.in_(_ids("ids")), media_items.c.status == "downloaded")
)


def downloaded_video_links(conn: Connection, link_ids: Iterable[int]) -> set[int]:
    """Which of these links show a downloaded video (``link_media``)."""
    ids = list(link_ids)
    if not ids:
        return set()
    return {int(r["link_id"]) for r in _DOWNLOADED_VIDEO_LINKS.rows(conn, ids=json.dumps(ids))}


_VIDEOS = Prepared(
    select(media_items)
    .join(link_media, link_media.c.media_id == media_items.c.id)
    .where(link_media.c.link_id == param("link_id"))
    .order_by(media_items.c.id)
)
_VIDEO_FILES = Prepared(
    select(archive_artifacts)
    .where(
        archive_artifacts.c.snapshot_id == param("snapshot_id"),
        archive_artifacts.c.kind.in_(MEDIA_KINDS),
    )
    .order_by(archive_artifacts.c.id)
)


def videos(conn: Connection, link_id: int) -> list[dict[str, Any]]:
    """The videos the link shows (``link_media``), each with the files of its download."""
    out = _VIDEOS.rows(conn, link_id=link_id)
    for video in out:
        snapshot = video["snapshot_id"]
        found = _VIDEO_FILES.rows(conn, snapshot_id=snapshot) if snapshot else []
        video["files"] = found
        video["video"] = next((a for a in found if a["kind"] == "video"), None)
        video["audio"] = next((a for a in found if a["kind"] == "audio"), None)
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


@cache
def recent_query(after_cursor: bool, forum: bool = False) -> Prepared:
    """The listing page query: values ``limit`` (one more than the page: the extra row says
    there is a next page), after a cursor ``at`` and ``link_id``, and with ``forum`` only
    the links posted on ``forum``."""
    stmt = summaries(status_index=False).order_by(listed_at.desc(), links.c.id.desc())
    stmt = stmt.limit(param("limit", integer=True))
    if forum:
        stmt = stmt.where(posted_on(param("forum")))
    if after_cursor:
        # (listed_at, id) < cursor, spelled so that the listing index serves it as a range
        at = param("at")
        stmt = stmt.where(listed_at <= at, or_(listed_at < at, links.c.id < param("link_id")))
    return Prepared(stmt)


def recent(
    conn: Connection, limit: int, cursor: Cursor | None, forum: str | None = None
) -> list[dict[str, Any]]:
    """The newest listed links (limit + 1 of them), with their artifacts; with ``forum``
    only those posted on it."""
    values: dict[str, Any] = {"limit": limit + 1}
    if cursor is not None:
        values |= {"at": cursor.at, "link_id": cursor.link_id}
    if forum:
        values["forum"] = forum
    rows = recent_query(cursor is not None, bool(forum)).rows(conn, **values)
    return with_artifacts(conn, rows)


private_file = and_(
    archive_artifacts.c.kind.in_(sorted(SESSION_KINDS)),
    exists().where(
        snapshots.c.id == archive_artifacts.c.snapshot_id, snapshots.c.private_session == 1
    ),
).label("private")
"""An artifact served only with the admin token: a session file (shared.session_files) of a
capture made with the site's cookies."""

_ARTIFACTS = Prepared(
    select(archive_artifacts, private_file)
    .where(archive_artifacts.c.link_id.in_(_ids("ids")))
    .order_by(archive_artifacts.c.id)
)


def artifacts_by_link(conn: Connection, link_ids: Iterable[int]) -> dict[int, list[dict[str, Any]]]:
    """Artifacts of these links, oldest first."""
    out: dict[int, list[dict[str, Any]]] = {i: [] for i in link_ids}
    if out:
        for a in _ARTIFACTS.rows(conn, ids=json.dumps(list(out))):
            out[a["link_id"]].append(a)
    return out


def with_artifacts(conn: Connection, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Attach each row's artifacts and its original's verdict, `source_status` (None when
    not checked yet): one query each for the page."""
    by_link = artifacts_by_link(conn, (r["id"] for r in rows))
    shown = downloaded_video_links(conn, by_link)
    verdicts = verdicts_of(conn, by_link)
    for r in rows:
        r["artifacts"] = by_link[r["id"]]
        r["source_status"] = verdicts.get(r["id"])
        r["video"] = r["id"] in shown or any(a["kind"] in VIDEO_KINDS for a in r["artifacts"])
    return rows


_LINK = Prepared(
    select(links, error_code.label("error_code"), quoted_of(links.c.id).label("quoted")).where(
        links.c.id == param("link_id"), public()
    )
)
_METADATA = Prepared(select(link_metadata).where(link_metadata.c.link_id == param("link_id")))
_ALIASES = Prepared(
    select(
        link_aliases.c.url,
        link_aliases.c.original_url,
        link_aliases.c.reason,
        link_aliases.c.created_at,
    )
    .where(link_aliases.c.link_id == param("link_id"))
    .order_by(link_aliases.c.id)
)
_JOBS = Prepared(
    select(archive_jobs)
    .where(archive_jobs.c.link_id == param("link_id"))
    .order_by(archive_jobs.c.id.desc())
)
_POST = Prepared(select(link_posts).where(link_posts.c.link_id == param("link_id")))
_TEXT = Prepared(
    select(func.substr(fts.c.extracted_text, 1, TEXT_CHARS)).where(fts.c.rowid == param("link_id"))
)


def detail(conn: Connection, link_id: int) -> dict[str, Any] | None:
    """Everything about one link, or None if there is none the public may see."""
    link = _LINK.first(conn, link_id=link_id)
    if link is None:
        return None
    link["metadata"] = _METADATA.first(conn, link_id=link_id) or {}
    link["title"] = link["metadata"].get("title")
    link["aliases"] = _ALIASES.rows(conn, link_id=link_id)
    link["occurrences"] = occurrences(conn, link_id)
    link["jobs"] = _JOBS.rows(conn, link_id=link_id)
    link["artifacts"] = artifacts_by_link(conn, [link_id])[link_id]
    link["text"] = unsegmented(_TEXT.scalar(conn, link_id=link_id) or "") or None
    link["snapshots"] = snapshot_history(conn, link_id, link["artifacts"])
    link["videos"] = videos(conn, link_id)
    link["post"] = _POST.first(conn, link_id=link_id)
    link["evidence"] = link_evidence.of_link(conn, link_id, link["artifacts"])
    link["external_archives"] = external_archives.of_link(conn, link_id)
    link["source_status"] = source_status(conn, link_id)
    link["video"] = any(v["status"] == "downloaded" for v in link["videos"]) or any(
        a["kind"] in VIDEO_KINDS for a in link["artifacts"]
    )
    return link


_OCCURRENCES = Prepared(
    select(
        discourse_posts.c.post_url,
        discourse_posts.c.forum,
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
    .where(link_occurrences.c.link_id == param("link_id"))
    .order_by(link_occurrences.c.seen_at, link_occurrences.c.id)
    .limit(500)
)


def occurrences(conn: Connection, link_id: int) -> list[dict[str, Any]]:
    """Where the link was posted (provenance), oldest first."""
    rows = _OCCURRENCES.rows(conn, link_id=link_id)
    for r in rows:
        r["in_quote"] = bool(r["in_quote"])
    return rows


_SNAPSHOTS = Prepared(
    select(
        snapshots,
        archive_jobs.c.status.label("job_status"),
        archive_jobs.c.last_error,
        archive_jobs.c.attempts.label("job_attempts"),
    )
    .select_from(snapshots.outerjoin(archive_jobs, archive_jobs.c.id == snapshots.c.job_id))
    .where(snapshots.c.link_id == param("link_id"))
    .order_by(snapshots.c.created_at.desc(), snapshots.c.id.desc())
    .limit(200)
)
_ATTEMPTS = Prepared(
    select(archive_result_attempts)
    .where(archive_result_attempts.c.snapshot_id.in_(_ids("snapshot_ids")))
    .order_by(
        archive_result_attempts.c.hook,
        archive_result_attempts.c.attempt,
        archive_result_attempts.c.id,
    )
)


def snapshot_history(
    conn: Connection, link_id: int, artifacts: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Every snapshot of the link, newest first, with every attempt's result of every hook
    and its artifacts."""
    snaps = _SNAPSHOTS.rows(conn, link_id=link_id)
    by_snap: dict[str, dict[str, Any]] = {s["id"]: s for s in snaps}
    for s in snaps:
        s["results"], s["artifacts"] = [], []
    if snaps:
        for r in _ATTEMPTS.rows(conn, snapshot_ids=json.dumps(list(by_snap))):
            by_snap[r["snapshot_id"]]["results"].append(r)
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


def newly_gone(conn: Connection, limit: int) -> list[dict[str, Any]]:
    """Listed links whose originals are gone, the newest verdicts first (/gone.xml)."""
    stmt = (
        summaries()
        .add_columns(liveness_verdicts.c.gone_at)
        .join(liveness_verdicts, liveness_verdicts.c.link_id == links.c.id)
        .where(liveness_verdicts.c.state == "gone")
        .order_by(liveness_verdicts.c.gone_at.desc(), links.c.id.desc())
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
        select(archive_artifacts, private_file)
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
