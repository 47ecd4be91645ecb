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

from services.writer import (
    artifacts,
    evidence_store,
    external_archives,
    feed_posts,
    linkstore,
    media,
    moderation,
    posts,
    text_history,
    tombstones,
    transitions,
)
from services.writer.context import ApplyContext
from services.writer.liveness import dispatch as liveness
from services.writer.liveness import observations, verdicts
from shared.links.canonical import CanonicalUrl, canonicalize

log = logging.getLogger(__name__)


def on_final_url(ctx: ApplyContext, link_id: int, final_url: str) -> int:
    """Record a link's final URL; merge it into the link that URL belongs to. Returns the
    id of the link that holds the data afterwards. A capture that ended on a URL taken down
    (a short link or a redirect to it) takes its link down instead (no merge)."""
    conn = ctx.conn
    final = canonicalize(final_url)
    if not isinstance(final, CanonicalUrl):
        return link_id
    linkstore.set_final_url(conn, link_id, final.canonical)
    forms = (final_url, final.normalized, final.canonical)
    if tombstones.matches(conn, ctx.policy.takedown_key, forms):
        log.info("link %d ends on a URL taken down: taking it down", link_id)
        moderation.take_down(ctx, link_id)
        return link_id
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
    """Move everything of `loser` to `survivor` and delete `loser` (inside a transaction);
    each table's rows move through the module that owns the table."""
    if loser == survivor or not linkstore.exists(conn, loser):
        return
    log.info("merging link %d into %d (same final URL)", loser, survivor)
    feed_posts.move_occurrences(conn, loser, survivor)
    transitions.move_to_link(conn, loser, survivor)
    artifacts.move_to_link(conn, loser, survivor)
    liveness.move_to_link(conn, loser, survivor)
    observations.move_to_link(conn, loser, survivor)
    verdicts.move_to_link(conn, loser, survivor)
    text_history.move_to_link(conn, loser, survivor)
    linkstore.absorb(conn, loser=loser, survivor=survivor, now=now)
    media.move_to_link(conn, loser, survivor, now)
    posts.move_to_link(conn, loser, survivor)
    evidence_store.move_to_link(conn, loser, survivor)
    external_archives.move_to_link(conn, loser, survivor)
