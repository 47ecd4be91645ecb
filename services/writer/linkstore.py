"""Links and what is known of them: the one module writing ``links``, ``link_aliases``,
``link_metadata``, ``link_tags`` and ``link_text_fts``.

Lookup by every known form of a URL, creation, aliases, status, metadata, tags, full-text
rows, and absorbing a link that dedup merged into another.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from typing import Any

from services.writer import tombstones
from services.writer.tombstones import TombstoneKey
from shared.content import cjk
from shared.links.canonical import CanonicalUrl

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class UrlForms:
    """The forms of one link's URL as the database keeps them."""

    original: str
    normalized: str
    canonical: str
    domain: str

    @classmethod
    def of(cls, url: CanonicalUrl) -> UrlForms:
        """From shared.links.canonicalize()."""
        return cls(url.original, url.normalized, url.canonical, url.domain)


def find_link(conn: sqlite3.Connection, normalized: str, canonical: str) -> tuple[int, str] | None:
    """The link a URL belongs to and how it was found: normalized, alias or canonical."""
    row = conn.execute(
        "SELECT id, 'normalized' FROM links WHERE normalized_url = ?1"
        " UNION ALL SELECT * FROM (SELECT link_id, 'alias' FROM link_aliases"
        "  WHERE url IN (?1, ?2) ORDER BY url = ?1 DESC LIMIT 1)"
        " UNION ALL SELECT * FROM (SELECT id, 'canonical' FROM links WHERE canonical_url = ?2"
        "  ORDER BY id LIMIT 1)"
        " LIMIT 1",
        (normalized, canonical),
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


NEXT_LINK_ID = (
    "SELECT max(coalesce((SELECT max_id FROM id_high_water WHERE name = 'links'), 0),"
    " coalesce((SELECT max(id) FROM links), 0)) + 1"
)
"""A new link's id: one above every id ever given (the high-water mark of migration 17,
which a restore keeps), never a merged, taken-down or lost link's."""


def upsert_link(
    conn: sqlite3.Connection, forms: UrlForms, seen_at: str, takedown_key: TombstoneKey
) -> int:
    """The id of the link for these forms, created if new; last_seen_at moves forward. A new
    link whose URL was taken down before (a tombstone matches one of its forms: a database
    restored from a backup has no row of the old link) is born taken down."""
    found = find_link(conn, forms.normalized, forms.canonical)
    if found is not None:
        link_id, via = found
        conn.execute(
            "UPDATE links SET last_seen_at = max(last_seen_at, ?),"
            " first_seen_at = min(first_seen_at, ?) WHERE id = ?",
            (seen_at, seen_at, link_id),
        )
        if via == "canonical":
            add_alias(conn, link_id, forms.normalized, forms.original, "canonical", seen_at)
        return link_id
    urls = (forms.original, forms.normalized, forms.canonical)
    down = tombstones.matches(conn, takedown_key, urls)
    cur = conn.execute(
        "INSERT INTO links (id, original_url, normalized_url, canonical_url, domain,"
        " first_seen_at, last_seen_at, status, taken_down_at)"
        f" VALUES (({NEXT_LINK_ID}), ?, ?, ?, ?, ?, ?, 'pending', ?)",
        (
            forms.original,
            forms.normalized,
            forms.canonical,
            forms.domain,
            seen_at,
            seen_at,
            seen_at if down else None,
        ),
    )
    link_id = int(cur.lastrowid or 0)
    if down:
        log.info("link %d born taken down: its URL was taken down before", link_id)
        tombstones.record(conn, takedown_key, urls, seen_at)  # this variant's forms too
        return link_id
    conn.execute(
        "INSERT INTO link_text_fts (rowid, link_id, title, url, domain, extracted_text,"
        " media_text, post_text) VALUES (?, ?, '', ?, ?, '', '', '')",
        (link_id, link_id, forms.canonical, forms.domain),
    )
    return link_id


def add_alias(
    conn: sqlite3.Connection,
    link_id: int,
    url: str,
    original: str,
    reason: str,
    at: str,
    merged_link_id: int | None = None,
) -> None:
    """Make `url` resolve to link_id (no-op when it is the link's own URL or already known)."""
    own = conn.execute(
        "SELECT 1 FROM links WHERE id = ? AND normalized_url = ?", (link_id, url)
    ).fetchone()
    if own:
        return
    conn.execute(
        "INSERT INTO link_aliases (link_id, url, original_url, reason, merged_link_id, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (url) DO NOTHING",
        (link_id, url, original, reason, merged_link_id, at),
    )


def resolve_link_id(conn: sqlite3.Connection, link_id: int) -> int | None:
    """A link id, following merges (a merged link's id points to its survivor)."""
    seen: set[int] = set()
    current = link_id
    while current not in seen:
        seen.add(current)
        if conn.execute("SELECT 1 FROM links WHERE id = ?", (current,)).fetchone():
            return current
        row = conn.execute(
            "SELECT link_id FROM link_aliases WHERE merged_link_id = ? LIMIT 1", (current,)
        ).fetchone()
        if row is None:
            return None
        current = int(row[0])
    return None


def archived(conn: sqlite3.Connection, link_id: int, now: str) -> None:
    """A capture of the link succeeded now."""
    conn.execute(
        "UPDATE links SET last_archived_at = max(coalesce(last_archived_at, ''), ?) WHERE id = ?",
        (now, link_id),
    )
    set_status(conn, link_id, "archived")


def attempt_ended(
    conn: sqlite3.Connection,
    link_id: int,
    outcome: str,
    error_code: str | None,
    error: str | None,
    retry_at: str | None,
    now: str,
) -> None:
    """A capture attempt of the link ended: record what it did and what happens next, and
    move links.status so that it never reads as a bare `pending` again: `archived` (all
    hooks fine), `partial` (something kept, not all), `failed` (nothing kept; a link archived
    before keeps `archived`, its last_outcome tells)."""
    conn.execute(
        "UPDATE links SET last_attempt_at = ?, last_outcome = ?, last_error_code = ?,"
        " last_error = ?, retry_at = ?, status = CASE ?"
        "  WHEN 'succeeded' THEN 'archived' WHEN 'partial' THEN 'partial'"
        "  ELSE CASE WHEN last_archived_at IS NULL THEN 'failed' ELSE status END END"
        " WHERE id = ?",
        (now, outcome, error_code, error, retry_at, outcome, link_id),
    )


def set_status(conn: sqlite3.Connection, link_id: int, event: str) -> None:
    """Move links.status on an event: queued, skipped, archived, failed."""
    if event == "queued":
        # a failed link stays `failed` while its next job waits: last_outcome, last_error
        # and retry_at say what happened and what comes next
        conn.execute(
            "UPDATE links SET status = 'pending' WHERE id = ? AND status = 'skipped'",
            (link_id,),
        )
    elif event == "skipped":
        conn.execute(
            "UPDATE links SET status = 'skipped' WHERE id = ? AND status = 'pending'"
            " AND NOT EXISTS (SELECT 1 FROM archive_jobs WHERE link_id = ?"
            " AND status IN ('queued', 'running'))",
            (link_id, link_id),
        )
    elif event == "archived":
        conn.execute("UPDATE links SET status = 'archived' WHERE id = ?", (link_id,))
    elif event == "failed":
        conn.execute(
            "UPDATE links SET status = 'failed' WHERE id = ? AND last_archived_at IS NULL",
            (link_id,),
        )
    else:
        raise ValueError(event)


FTS_COLUMNS = ("title", "url", "domain", "extracted_text", "media_text", "post_text")
"""The searchable columns of link_text_fts (the web's search matches them all)."""


def set_fts(conn: sqlite3.Connection, link_id: int, column: str, value: str) -> None:
    """Set one column (title, extracted_text, media_text, post_text) of the link's full-text
    row (Chinese, Japanese and Korean characters one token each: shared.content.cjk)."""
    if column not in FTS_COLUMNS:
        raise ValueError(column)
    value = cjk.segmented(value)
    if conn.execute("SELECT 1 FROM link_text_fts WHERE rowid = ?", (link_id,)).fetchone():
        conn.execute(f"UPDATE link_text_fts SET {column} = ? WHERE rowid = ?", (value, link_id))
        return
    row = conn.execute(
        "SELECT canonical_url, domain FROM links WHERE id = ?", (link_id,)
    ).fetchone()
    if row is None:
        return
    fields = dict.fromkeys(FTS_COLUMNS, "") | {"url": row[0], "domain": row[1]}
    fields[column] = value
    conn.execute(
        f"INSERT INTO link_text_fts (rowid, link_id, {', '.join(FTS_COLUMNS)})"
        f" VALUES (?, ?, {', '.join('?' for _ in FTS_COLUMNS)})",
        (link_id, link_id, *(fields[c] for c in FTS_COLUMNS)),
    )


METADATA_FIELDS = (
    "title",
    "description",
    "author",
    "published_at",
    "site_name",
    "language",
    "canonical_url",
    "favicon",
    "image",
)


def set_metadata(conn: sqlite3.Connection, link_id: int, values: dict[str, Any], now: str) -> None:
    """Merge metadata: a field given (not None) replaces the stored one."""
    row = [values.get(f) for f in METADATA_FIELDS]
    sets = ", ".join(f"{f} = coalesce(excluded.{f}, link_metadata.{f})" for f in METADATA_FIELDS)
    conn.execute(
        f"INSERT INTO link_metadata (link_id, {', '.join(METADATA_FIELDS)}, updated_at)"
        f" VALUES (?, {', '.join('?' for _ in METADATA_FIELDS)}, ?)"
        f" ON CONFLICT (link_id) DO UPDATE SET {sets},"
        " updated_at = excluded.updated_at",
        (link_id, *row, now),
    )
    if values.get("title"):
        set_fts(conn, link_id, "title", str(values["title"]))


def default_title(conn: sqlite3.Connection, link_id: int, title: str, now: str) -> None:
    """A snapshot's title: the link's title unless metadata named one already."""
    conn.execute(
        "INSERT INTO link_metadata (link_id, title, updated_at) VALUES (?, ?, ?)"
        " ON CONFLICT (link_id) DO UPDATE SET title = coalesce(link_metadata.title,"
        " excluded.title)",
        (link_id, title, now),
    )
    stored = conn.execute("SELECT title FROM link_metadata WHERE link_id = ?", (link_id,))
    set_fts(conn, link_id, "title", stored.fetchone()[0])


def add_tag(conn: sqlite3.Connection, link_id: int, name: str, now: str) -> None:
    """Tag a link (once per name)."""
    conn.execute(
        "INSERT INTO link_tags (link_id, name, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
        (link_id, name, now),
    )


def set_final_url(conn: sqlite3.Connection, link_id: int, final_url: str) -> None:
    """The canonical form of where the link's capture ended up after redirects."""
    conn.execute("UPDATE links SET final_url = ? WHERE id = ?", (final_url, link_id))


def exists(conn: sqlite3.Connection, link_id: int) -> bool:
    """Whether the link id is a live link (not merged away)."""
    return conn.execute("SELECT 1 FROM links WHERE id = ?", (link_id,)).fetchone() is not None


def absorb(conn: sqlite3.Connection, *, loser: int, survivor: int, now: str) -> None:
    """Dedup merged `loser` into `survivor`: every URL of `loser` becomes an alias of
    `survivor`, its tags, metadata and full-text row join it, and `loser` is deleted."""
    old = conn.execute("SELECT * FROM links WHERE id = ?", (loser,)).fetchone()
    if old is None or loser == survivor:
        return
    conn.execute("UPDATE link_aliases SET link_id = ? WHERE link_id = ?", (survivor, loser))
    for url in (old["normalized_url"], old["canonical_url"], old["final_url"]):
        if url:
            add_alias(conn, survivor, url, old["original_url"], "merged", now, loser)
    # The merged id itself must resolve even if every URL of it was already known.
    conn.execute(
        "UPDATE link_aliases SET merged_link_id = ? WHERE url = ? AND merged_link_id IS NULL",
        (loser, old["normalized_url"]),
    )
    conn.execute(
        "INSERT INTO link_tags (link_id, name, created_at) SELECT ?, name, created_at"
        " FROM link_tags WHERE link_id = ? ON CONFLICT DO NOTHING",
        (survivor, loser),
    )
    conn.execute("DELETE FROM link_tags WHERE link_id = ?", (loser,))
    _merge_metadata(conn, loser, survivor)
    _merge_fts(conn, loser, survivor)
    conn.execute(
        "UPDATE links SET first_seen_at = min(first_seen_at, ?), last_seen_at = max(last_seen_at,"
        " ?), last_archived_at = CASE WHEN ? IS NULL THEN last_archived_at"
        " WHEN last_archived_at IS NULL THEN ? ELSE max(last_archived_at, ?) END WHERE id = ?",
        (
            old["first_seen_at"],
            old["last_seen_at"],
            old["last_archived_at"],
            old["last_archived_at"],
            old["last_archived_at"],
            survivor,
        ),
    )
    _merge_status(conn, survivor, old["status"])
    conn.execute("DELETE FROM links WHERE id = ?", (loser,))


def _merge_metadata(conn: sqlite3.Connection, loser: int, survivor: int) -> None:
    fields = METADATA_FIELDS
    sets = ", ".join(f"{f} = coalesce(link_metadata.{f}, excluded.{f})" for f in fields)
    conn.execute(
        f"INSERT INTO link_metadata (link_id, {', '.join(fields)}, updated_at)"
        f" SELECT ?, {', '.join(fields)}, updated_at FROM link_metadata WHERE link_id = ?"
        f" ON CONFLICT (link_id) DO UPDATE SET {sets}",
        (survivor, loser),
    )
    conn.execute("DELETE FROM link_metadata WHERE link_id = ?", (loser,))


def _merge_fts(conn: sqlite3.Connection, loser: int, survivor: int) -> None:
    old = conn.execute(
        "SELECT title, extracted_text, post_text FROM link_text_fts WHERE rowid = ?", (loser,)
    ).fetchone()
    conn.execute("DELETE FROM link_text_fts WHERE rowid = ?", (loser,))
    if old is None:
        return
    new = conn.execute(
        "SELECT title, extracted_text, post_text FROM link_text_fts WHERE rowid = ?",
        (survivor,),
    ).fetchone()
    for column in ("title", "extracted_text", "post_text"):
        if old[column] and not (new and new[column]):
            set_fts(conn, survivor, column, old[column])


_STATUS_RANK = {"archived": 3, "pending": 2, "failed": 1, "skipped": 0}


def _merge_status(conn: sqlite3.Connection, survivor: int, loser_status: str) -> None:
    row = conn.execute("SELECT status FROM links WHERE id = ?", (survivor,)).fetchone()
    if row and _STATUS_RANK[loser_status] > _STATUS_RANK[row[0]]:
        conn.execute("UPDATE links SET status = ? WHERE id = ?", (loser_status, survivor))


def take_down(conn: sqlite3.Connection, link_id: int, now: str) -> None:
    """Mark the link taken down (hidden; an earlier takedown's time stays)."""
    conn.execute(
        "UPDATE links SET taken_down_at = coalesce(taken_down_at, ?) WHERE id = ?", (now, link_id)
    )


def undo_take_down(conn: sqlite3.Connection, link_id: int) -> None:
    """Show a taken-down link again (what was captured of it was kept)."""
    conn.execute("UPDATE links SET taken_down_at = NULL WHERE id = ?", (link_id,))


def forget_captured(conn: sqlite3.Connection, link_id: int) -> None:
    """Forget what was captured of a taken-down link (metadata, search text): its purge."""
    conn.execute("DELETE FROM link_metadata WHERE link_id = ?", (link_id,))
    conn.execute("DELETE FROM link_text_fts WHERE rowid = ?", (link_id,))
