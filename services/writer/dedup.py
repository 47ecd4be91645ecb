"""Redirect-aware dedup: links whose final canonical URL is the same become one link.

When a capture learns a link's final URL (after redirects) and its canonical form is another
link's canonical or normalized URL (or an alias of it), the two are merged in the caller's
transaction: the other link survives, every URL of the merged one becomes an alias of it
(so old ids, originals and short links still resolve), and occurrences, jobs, snapshots,
artifacts, metadata, tags and the full-text row move to the survivor before the merged link
is deleted.
"""

from __future__ import annotations

import logging
import sqlite3

from services.writer import linkstore
from services.writer.context import ApplyContext
from shared.links import CanonicalUrl, canonicalize

log = logging.getLogger(__name__)

_MOVE_BY_LINK = ("archive_jobs", "snapshots", "archive_artifacts")


def on_final_url(ctx: ApplyContext, link_id: int, final_url: str) -> int:
    """Record a link's final URL; merge it into the link that URL belongs to. Returns the
    id of the link that holds the data afterwards."""
    conn = ctx.conn
    final = canonicalize(final_url)
    if not isinstance(final, CanonicalUrl):
        return link_id
    conn.execute("UPDATE links SET final_url = ? WHERE id = ?", (final.canonical, link_id))
    row = conn.execute(
        "SELECT normalized_url, canonical_url FROM links WHERE id = ?", (link_id,)
    ).fetchone()
    if row is None or final.canonical in (row["canonical_url"], row["normalized_url"]):
        return link_id
    found = linkstore.find_link(conn, final.canonical, final.canonical)
    if found is None or found[0] == link_id:
        linkstore.add_alias(conn, link_id, final.canonical, final_url, "redirect", ctx.now_iso)
        return link_id
    survivor = found[0]
    merge(conn, loser=link_id, survivor=survivor, now=ctx.now_iso)
    return survivor


def merge(conn: sqlite3.Connection, *, loser: int, survivor: int, now: str) -> None:
    """Move everything of `loser` to `survivor` and delete `loser` (inside a transaction)."""
    old = conn.execute("SELECT * FROM links WHERE id = ?", (loser,)).fetchone()
    if old is None or loser == survivor:
        return
    log.info("merging link %d into %d (same final URL)", loser, survivor)
    conn.execute("UPDATE link_aliases SET link_id = ? WHERE link_id = ?", (survivor, loser))
    for url in (old["normalized_url"], old["canonical_url"], old["final_url"]):
        if url:
            linkstore.add_alias(conn, survivor, url, old["original_url"], "merged", now, loser)
    # The merged id itself must resolve even if every URL of it was already known.
    conn.execute(
        "UPDATE link_aliases SET merged_link_id = ? WHERE url = ? AND merged_link_id IS NULL",
        (loser, old["normalized_url"]),
    )
    conn.execute(
        "INSERT INTO link_occurrences (link_id, discourse_post_id, seen_at, in_quote,"
        " context_snippet, original_url) SELECT ?, discourse_post_id, seen_at, in_quote,"
        " context_snippet, original_url FROM link_occurrences WHERE link_id = ? ORDER BY id"
        " ON CONFLICT (discourse_post_id, link_id, in_quote) DO NOTHING",
        (survivor, loser),
    )
    conn.execute("DELETE FROM link_occurrences WHERE link_id = ?", (loser,))
    for table in _MOVE_BY_LINK:
        conn.execute(f"UPDATE {table} SET link_id = ? WHERE link_id = ?", (survivor, loser))
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
    fields = ("title", "description", "author", "published_at", "site_name", "language")
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
        "SELECT title, extracted_text FROM link_text_fts WHERE rowid = ?", (loser,)
    ).fetchone()
    conn.execute("DELETE FROM link_text_fts WHERE rowid = ?", (loser,))
    if old is None:
        return
    new = conn.execute(
        "SELECT title, extracted_text FROM link_text_fts WHERE rowid = ?", (survivor,)
    ).fetchone()
    for column in ("title", "extracted_text"):
        if old[column] and not (new and new[column]):
            linkstore.set_fts(conn, survivor, column, old[column])


_STATUS_RANK = {"archived": 3, "pending": 2, "failed": 1, "skipped": 0}


def _merge_status(conn: sqlite3.Connection, survivor: int, loser_status: str) -> None:
    row = conn.execute("SELECT status FROM links WHERE id = ?", (survivor,)).fetchone()
    if row and _STATUS_RANK[loser_status] > _STATUS_RANK[row[0]]:
        conn.execute("UPDATE links SET status = ? WHERE id = ?", (loser_status, survivor))
