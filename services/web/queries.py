"""Read-only queries: the web never writes; it opens the database with `mode=ro`."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any


def connect_readonly(path: Path) -> sqlite3.Connection | None:
    """A read-only connection, or None while the writer has not created the database yet."""
    if not path.exists():
        return None
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    return conn


def recent_links(conn: sqlite3.Connection, limit: int = 50) -> list[dict[str, Any]]:
    """The newest links with their title and artifacts."""
    rows = conn.execute(
        """
        SELECT l.id, l.canonical_url AS url, l.domain, l.status, l.first_seen_at,
               l.last_archived_at, m.title
        FROM links l LEFT JOIN link_metadata m ON m.link_id = l.id
        ORDER BY l.id DESC LIMIT ?
        """,
        (limit,),
    ).fetchall()
    links = [dict(r) for r in rows]
    if not links:
        return links
    by_id = {link["id"]: link for link in links}
    for link in links:
        link["artifacts"] = []
    marks = ",".join("?" * len(by_id))
    for a in conn.execute(
        f"""SELECT id, link_id, kind, s3_key, content_type, bytes, sha256
            FROM archive_artifacts WHERE link_id IN ({marks}) ORDER BY id""",
        list(by_id),
    ):
        by_id[a["link_id"]]["artifacts"].append(
            {
                "id": a["id"],
                "kind": a["kind"],
                "sha256": a["sha256"],
                "bytes": a["bytes"],
                "content_type": a["content_type"],
                "url": f"/artifacts/{a['id']}",
            }
        )
    return links


def artifact_key(conn: sqlite3.Connection, artifact_id: int) -> str | None:
    """The S3 key of an artifact."""
    row = conn.execute(
        "SELECT s3_key FROM archive_artifacts WHERE id = ?", (artifact_id,)
    ).fetchone()
    return None if row is None else str(row["s3_key"])
