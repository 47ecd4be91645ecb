"""Platform posts: the one module writing ``link_posts``.

A platform hook's Post record (shared.hooks.records.PostRecord) becomes its link's post: one
row per link, the newest capture's, with the whole post as JSON and the columns the web
lists and filters by; its search text goes into the link's ``post_text`` full-text column
(through linkstore, the FTS table's owner). A post the platform now shows as removed (a
Reddit post ``[removed]`` by its moderators) never replaces one it showed whole: the archive
exists for the moment the original goes. Which snapshot found which plugin's post tells
``done.py`` that the snapshot kept the post, so a login wall the browser met that time does
not make the link partial.
"""

from __future__ import annotations

import logging
import sqlite3

from services.writer import linkstore, text_history
from shared.hooks.records import PostRecord

log = logging.getLogger(__name__)


def record_post(
    conn: sqlite3.Connection, link_id: int, snapshot_id: str, rec: PostRecord, now: str
) -> bool:
    """Keep the post as the link's; False when the stored one is kept instead (it showed the
    post whole, this one shows it removed)."""
    post = rec.post
    stored = conn.execute(
        "SELECT unavailable FROM link_posts WHERE link_id = ?", (link_id,)
    ).fetchone()
    if stored is not None and stored["unavailable"] is None and post.unavailable:
        log.info("link %d: the post now shows as %r; the whole one is kept", link_id,
                 post.unavailable)  # fmt: skip
        conn.execute("UPDATE link_posts SET updated_at = ? WHERE link_id = ?", (now, link_id))
        return False
    text_history.keep_replaced(conn, link_id, "post_text", post.search_text(), snapshot_id)
    conn.execute(
        "INSERT INTO link_posts (link_id, snapshot_id, plugin, platform, post_id, source,"
        " author_name, author_handle, created_at, unavailable, post_json, captured_at,"
        " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (link_id) DO UPDATE SET snapshot_id = excluded.snapshot_id,"
        " plugin = excluded.plugin, platform = excluded.platform, post_id = excluded.post_id,"
        " source = excluded.source, author_name = excluded.author_name,"
        " author_handle = excluded.author_handle, created_at = excluded.created_at,"
        " unavailable = excluded.unavailable, post_json = excluded.post_json,"
        " captured_at = excluded.captured_at, updated_at = excluded.updated_at",
        (
            link_id,
            snapshot_id,
            rec.plugin,
            post.platform,
            post.post_id,
            post.source,
            post.author.name,
            post.author.handle,
            post.created_at,
            post.unavailable,
            post.model_dump_json(exclude_none=True),
            now,
            now,
        ),
    )
    linkstore.set_fts(conn, link_id, "post_text", post.search_text())
    return True


def plugin_of(conn: sqlite3.Connection, snapshot_id: str) -> str | None:
    """The plugin whose post this snapshot kept, None when it kept none."""
    row = conn.execute(
        "SELECT plugin FROM link_posts WHERE snapshot_id = ?", (snapshot_id,)
    ).fetchone()
    return None if row is None else str(row[0])


def move_to_link(conn: sqlite3.Connection, loser: int, survivor: int) -> None:
    """Dedup merged `loser` into `survivor`: its post joins the survivor unless the survivor
    has one."""
    conn.execute("UPDATE OR IGNORE link_posts SET link_id = ? WHERE link_id = ?", (survivor, loser))
    conn.execute("DELETE FROM link_posts WHERE link_id = ?", (loser,))


def forget(conn: sqlite3.Connection, link_id: int) -> None:
    """A takedown: the link's post goes with what else was captured of it."""
    conn.execute("DELETE FROM link_posts WHERE link_id = ?", (link_id,))


def forget_snapshot(conn: sqlite3.Connection, link_id: int, snapshot_id: str) -> None:
    """The post this snapshot kept, forgotten with its search text (a page that asked not to
    be archived)."""
    gone = conn.execute(
        "DELETE FROM link_posts WHERE link_id = ? AND snapshot_id = ?", (link_id, snapshot_id)
    )
    if gone.rowcount:
        linkstore.set_fts(conn, link_id, "post_text", "")
