"""Media: which links get a media job, one download per video, what a media job's end means,
and media text for search. Every media decision of the writer is here; the modules applying
messages call it.

Writes ``media_items`` and ``link_media``; jobs only through
``transitions`` (``queue_media``, ``skip_media``), the full-text row through ``linkstore``.

- A link whose URL names a video (``shared.links.video_key.media_key``: a video on one of the
  platforms, or a media file) gets a media job next to its capture job. A link whose URL
  names a post that may or may not hold a video (an X or Bluesky post, an Instagram `/p/`
  post: ``names_post``) gets one once its capture read a post with a video or GIF, or, when
  its capture kept no post at all, once that capture is over (the media service may still
  find a video). A link whose capture found a video on the page (a Metadata record with
  ``has_video``) gets one then.
- One download per video: the video's key (platform + id) is looked up first; when another
  link's job already downloads (or downloaded) it, the new link points at that download
  (``link_media``) and its media job is recorded ``skipped_cached`` with the reason. A Media
  record whose key another job already downloaded points the link at that first download too.
- The title, uploader, description and transcript of every video a link shows go into the
  ``media_text`` column of the link's full-text row, so a search finds the link by them.
- A media job never changes its link's status, except that a link which *is* a media file
  (``.mp4``, ``.m3u8``, ...) counts as archived once its file is downloaded (its page
  capture can only end "not a web page"), also when that capture ends after the download.
"""

from __future__ import annotations

import logging
import sqlite3

from services.writer import linkstore, transitions
from services.writer.job_policy import Decision, LinkState, Policy
from shared.hooks.records import MediaRecord, ProgressRecord
from shared.links.video_key import KEYED_PLATFORMS, MediaKey, media_key, names_post

log = logging.getLogger(__name__)


def on_decision(
    conn: sqlite3.Connection, link_id: int, decision: Decision, policy: Policy, now: str
) -> int | None:
    """A link got a capture job: if its URL names a video, it gets a media job too (or
    points at the download of the same video). Returns the media job id, if one was made."""
    if decision.status != "queued" or not policy.media_jobs:
        return None
    row = conn.execute("SELECT canonical_url FROM links WHERE id = ?", (link_id,)).fetchone()
    key = None if row is None else media_key(row[0])
    if key is None or names_post(row[0]):
        return None
    reason = f"video link ({key.platform})"
    return _job_for_key(conn, link_id, key, reason, decision.priority, now)


def capture_decided(
    conn: sqlite3.Connection,
    link_id: int,
    decision: Decision,
    policy: Policy,
    now: str,
    state: LinkState | None = None,
) -> int:
    """Record a capture decision (``transitions.record_decision``) with the media job the
    link's URL calls for (``on_decision``). Every way a capture is asked for (a feed post,
    ``dla add``, a rearchive, ``dla retry``, an original found changed) goes through here,
    so a video link gets its download however it was queued. Returns the capture job id."""
    job_id = transitions.record_decision(conn, link_id, decision, now, state)
    on_decision(conn, link_id, decision, policy, now)
    return job_id


def _post_link_job(conn: sqlite3.Connection, link_id: int, reason: str, now: str) -> int | None:
    """A media job under the video key of a link naming a platform post (None for others,
    or when the link joined another link's download)."""
    row = conn.execute("SELECT canonical_url FROM links WHERE id = ?", (link_id,)).fetchone()
    if row is None or not names_post(row[0]):
        return None
    key = media_key(row[0])
    return None if key is None else _job_for_key(conn, link_id, key, reason, 0, now)


def on_page_video(conn: sqlite3.Connection, link_id: int, policy: Policy, now: str) -> int | None:
    """The link's capture found a video on the page (or in its platform post): a media job,
    unless it has one; a link naming a post gets it under the post's video key, so the video
    is downloaded once however many links show it."""
    if not policy.media_jobs or _has_media_job(conn, link_id):
        return None
    return _post_link_job(conn, link_id, "the page shows a video", now) or transitions.queue_media(
        conn, link_id, "the page shows a video", 0, now
    )


def _has_media_job(conn: sqlite3.Connection, link_id: int) -> bool:
    row = conn.execute(
        "SELECT 1 FROM archive_jobs WHERE link_id = ? AND kind = 'media'"
        " AND status IN ('queued', 'running', 'succeeded', 'skipped_cached') LIMIT 1",
        (link_id,),
    ).fetchone()
    return row is not None


def _job_for_key(
    conn: sqlite3.Connection, link_id: int, key: MediaKey, reason: str, priority: int, now: str
) -> int | None:
    item = conn.execute(
        "SELECT id, link_id, status, job_id FROM media_items WHERE media_key = ?", (str(key),)
    ).fetchone()
    if item is not None and item["status"] != "failed":
        _attach(conn, link_id, int(item["id"]), now)
        if item["link_id"] != link_id:
            transitions.skip_media(
                conn, link_id, f"same video as link {item['link_id']} ({key})", now
            )
        return None
    if _has_media_job(conn, link_id) and item is None:
        return None
    job_id = transitions.queue_media(conn, link_id, reason, priority, now)
    if item is None:
        cur = conn.execute(
            "INSERT INTO media_items (media_key, platform, video_id, link_id, job_id, status,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)",
            (str(key), key.platform, key.video_id, link_id, job_id, now, now),
        )
        media_id = int(cur.lastrowid or 0)
    else:  # failed before (e.g. gave up after retries): this link's job tries again
        media_id = int(item["id"])
        conn.execute(
            "UPDATE media_items SET link_id = ?, job_id = ?, status = 'pending', error_code = NULL,"
            " updated_at = ? WHERE id = ?",
            (link_id, job_id, now, media_id),
        )
    _attach(conn, link_id, media_id, now)
    return job_id


def _attach(conn: sqlite3.Connection, link_id: int, media_id: int, now: str) -> None:
    conn.execute(
        "INSERT INTO link_media (link_id, media_id, created_at) VALUES (?, ?, ?)"
        " ON CONFLICT DO NOTHING",
        (link_id, media_id, now),
    )
    refresh_text(conn, link_id)


def record_media(
    conn: sqlite3.Connection,
    link_id: int,
    job_id: int,
    snapshot_id: str,
    rec: MediaRecord,
    now: str,
) -> None:
    """A Media record: the video a media job found (and downloaded, or kept metadata of)."""
    status = "downloaded" if rec.downloaded else "metadata_only"
    if rec.platform in KEYED_PLATFORMS:
        key = f"{rec.platform}:{rec.video_id}"
    else:  # generic pages and files: ids are only unique on their page
        key = f"{rec.platform}:{rec.video_id}@{rec.media_url or ''}"
    item = conn.execute(
        "SELECT id, job_id, status FROM media_items WHERE media_key = ?", (key,)
    ).fetchone()
    file_key = media_key(rec.media_url) if rec.media_url else None
    if item is None and rec.platform not in KEYED_PLATFORMS and file_key is not None:
        item = conn.execute(  # a media file known by its URL (its own link's job, a page's)
            "SELECT id, job_id, status FROM media_items WHERE media_key = ?", (str(file_key),)
        ).fetchone()
    if item is None and rec.platform not in KEYED_PLATFORMS:
        item = conn.execute(  # the row the job was made for (a media file's URL key)
            "SELECT id, job_id, status FROM media_items WHERE job_id = ? AND title IS NULL"
            " ORDER BY id LIMIT 1",
            (job_id,),
        ).fetchone()
    fields = (
        rec.title,
        rec.description,
        rec.uploader,
        rec.duration_s,
        rec.transcript,
        rec.media_url,
    )
    if item is None:
        cur = conn.execute(
            "INSERT INTO media_items (media_key, platform, video_id, link_id, job_id,"
            " snapshot_id, status, title, description, uploader, duration_s, transcript,"
            " media_url, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (key, rec.platform, rec.video_id, link_id, job_id, snapshot_id, status, *fields, now,
             now),
        )  # fmt: skip
        media_id = int(cur.lastrowid or 0)
    elif item["job_id"] == job_id or item["status"] in ("pending", "failed"):
        media_id = int(item["id"])
        conn.execute(
            "UPDATE media_items SET job_id = ?, snapshot_id = ?, status = ?, title = ?,"
            " description = ?, uploader = ?, duration_s = ?, transcript = ?, media_url = ?,"
            " updated_at = ? WHERE id = ?",
            (job_id, snapshot_id, status, *fields, now, media_id),
        )
    else:  # another job downloaded this video first: the link points at that download
        media_id = int(item["id"])
        log.info("job %d found %s, downloaded before by job %s", job_id, key, item["job_id"])
    _attach(conn, link_id, media_id, now)
    for (other,) in conn.execute(
        "SELECT link_id FROM link_media WHERE media_id = ? AND link_id != ?", (media_id, link_id)
    ).fetchall():
        refresh_text(conn, int(other))


def record_progress(conn: sqlite3.Connection, job_id: int, rec: ProgressRecord, now: str) -> None:
    """How far the job's download has come."""
    conn.execute(
        "UPDATE media_items SET downloaded_bytes = ?, total_bytes = ?, percent = ?,"
        " updated_at = ? WHERE job_id = ? AND status = 'pending'",
        (rec.downloaded_bytes, rec.total_bytes, rec.percent, now, job_id),
    )


def attempt_ended(
    conn: sqlite3.Connection,
    job_id: int,
    snapshot_id: str | None,
    *,
    finished: bool,
    ok: bool,
    now: str,
) -> None:
    """An attempt of a media job ended. A media job never changes what its link's status
    says; once it is `finished` (succeeded, failed, or attempts used up) its videos still
    pending become downloaded (`ok` and a video or audio file was stored), metadata_only
    (only metadata, e.g. too large) or failed."""
    if finished:
        _settle_job(conn, job_id, snapshot_id, ok, now)


def _settle_job(
    conn: sqlite3.Connection, job_id: int, snapshot_id: str | None, ok: bool, now: str
) -> None:
    kinds = {
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT kind FROM archive_artifacts WHERE snapshot_id = ?", (snapshot_id,)
        ).fetchall()
    }
    error = conn.execute(
        "SELECT error_code FROM archive_results WHERE snapshot_id = ? AND plugin = 'media'"
        " AND status = 'failed' ORDER BY id DESC LIMIT 1",
        (snapshot_id,),
    ).fetchone()
    if ok and kinds & {"video", "audio"}:
        status = "downloaded"
    elif kinds & {"info"}:
        status = "metadata_only"
    else:
        status = "failed"
    conn.execute(
        "UPDATE media_items SET status = ?, error_code = ?, snapshot_id = coalesce(snapshot_id, ?),"
        " updated_at = ? WHERE job_id = ? AND status = 'pending'",
        (status, error[0] if error else None, snapshot_id, now, job_id),
    )
    if status == "downloaded":
        _archive_media_file_links(conn, job_id, now)


def _archive_media_file_links(conn: sqlite3.Connection, job_id: int, now: str) -> None:
    """A link that *is* a media file (``url:`` key) is archived by its download: its page
    capture can only say "not a web page"."""
    rows = conn.execute(
        "SELECT DISTINCT lm.link_id, l.canonical_url, m.media_key FROM media_items m"
        " JOIN link_media lm ON lm.media_id = m.id JOIN links l ON l.id = lm.link_id"
        " WHERE m.job_id = ? AND m.platform = 'url'",
        (job_id,),
    ).fetchall()
    for link_id, url, key in rows:  # not a page that links to the file: its capture decides
        if str(media_key(url)) == key:
            linkstore.archived(conn, int(link_id), now)


def capture_ended(
    conn: sqlite3.Connection, link_id: int, *, finished: bool, policy: Policy, now: str
) -> None:
    """A page capture of the link ended (after linkstore.attempt_ended): a link that is a
    media file whose download is done stays archived, whichever finished first; a link
    naming a platform post whose captures are over without reading the post gets a media job
    (the media service may still find a video)."""
    if finished and policy.media_jobs and not _has_media_job(conn, link_id):
        kept_post = conn.execute("SELECT 1 FROM link_posts WHERE link_id = ?", (link_id,))
        if kept_post.fetchone() is None:
            _post_link_job(conn, link_id, "no post was read: the media service looks", now)
    if conn.execute(
        "SELECT 1 FROM link_media lm JOIN media_items m ON m.id = lm.media_id"
        " WHERE lm.link_id = ? AND m.platform = 'url' AND m.status = 'downloaded'",
        (link_id,),
    ).fetchone():
        linkstore.set_status(conn, link_id, "archived")  # archived_at: when it downloaded


def refresh_text(conn: sqlite3.Connection, link_id: int) -> None:
    """The link's media_text: title, uploader, description, transcript of its videos."""
    rows = conn.execute(
        "SELECT m.title, m.uploader, m.description, m.transcript FROM link_media lm"
        " JOIN media_items m ON m.id = lm.media_id WHERE lm.link_id = ? ORDER BY m.id",
        (link_id,),
    ).fetchall()
    text = "\n\n".join("\n".join(v for v in row if v) for row in rows).strip()
    linkstore.set_fts(conn, link_id, "media_text", text)


def move_to_link(conn: sqlite3.Connection, loser: int, survivor: int, now: str) -> None:
    """Dedup merged link `loser` into `survivor`: the videos it showed follow."""
    conn.execute(
        "INSERT INTO link_media (link_id, media_id, created_at) SELECT ?, media_id, created_at"
        " FROM link_media WHERE link_id = ? ON CONFLICT DO NOTHING",
        (survivor, loser),
    )
    conn.execute("DELETE FROM link_media WHERE link_id = ?", (loser,))
    conn.execute("UPDATE media_items SET link_id = ? WHERE link_id = ?", (survivor, loser))
    refresh_text(conn, survivor)
