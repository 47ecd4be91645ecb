"""Links: lookup by every known form of a URL, creation, aliases, status, full-text rows."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from shared.links import CanonicalUrl


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


def upsert_link(conn: sqlite3.Connection, forms: UrlForms, seen_at: str) -> int:
    """The id of the link for these forms, created if new; last_seen_at moves forward."""
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
    cur = conn.execute(
        "INSERT INTO links (original_url, normalized_url, canonical_url, domain,"
        " first_seen_at, last_seen_at, status) VALUES (?, ?, ?, ?, ?, ?, 'pending')",
        (forms.original, forms.normalized, forms.canonical, forms.domain, seen_at, seen_at),
    )
    link_id = int(cur.lastrowid or 0)
    conn.execute(
        "INSERT INTO link_text_fts (rowid, link_id, title, url, domain, extracted_text)"
        " VALUES (?, ?, '', ?, ?, '')",
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


def set_status(conn: sqlite3.Connection, link_id: int, event: str) -> None:
    """Move links.status on an event: queued, skipped, archived, failed."""
    if event == "queued":
        conn.execute(
            "UPDATE links SET status = 'pending' WHERE id = ? AND status IN ('skipped', 'failed')",
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


def set_fts(conn: sqlite3.Connection, link_id: int, column: str, value: str) -> None:
    """Set one column (title, extracted_text) of the link's full-text row."""
    if column not in ("title", "extracted_text", "url", "domain"):
        raise ValueError(column)
    if conn.execute("SELECT 1 FROM link_text_fts WHERE rowid = ?", (link_id,)).fetchone():
        conn.execute(f"UPDATE link_text_fts SET {column} = ? WHERE rowid = ?", (value, link_id))
        return
    row = conn.execute(
        "SELECT canonical_url, domain FROM links WHERE id = ?", (link_id,)
    ).fetchone()
    if row is None:
        return
    fields = {"title": "", "url": row[0], "domain": row[1], "extracted_text": ""}
    fields[column] = value
    conn.execute(
        "INSERT INTO link_text_fts (rowid, link_id, title, url, domain, extracted_text)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (
            link_id,
            link_id,
            fields["title"],
            fields["url"],
            fields["domain"],
            fields["extracted_text"],
        ),
    )
