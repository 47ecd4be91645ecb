"""Applying feed messages: posts (with their link occurrences and job decisions) and gaps.

The one module writing `discourse_posts`, `link_occurrences` and `feed_gaps`.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from services.writer import linkstore, media, transitions
from services.writer.clock import iso, iso_or_none
from services.writer.context import ApplyContext
from services.writer.job_policy import decide
from services.writer.linkstore import UrlForms
from shared.discourse import forum_of
from shared.links.canonical import CanonicalUrl
from shared.messages import FeedGap, FeedPost, LinkOccurrence

_INSERT_OCCURRENCE = (
    "INSERT INTO link_occurrences (link_id, discourse_post_id, seen_at, in_quote,"
    " context_snippet, original_url) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
)
_UPSERT_OCCURRENCE = (
    "INSERT INTO link_occurrences (link_id, discourse_post_id, seen_at, in_quote,"
    " context_snippet, original_url) VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (discourse_post_id, link_id, in_quote) DO UPDATE"
    " SET context_snippet = excluded.context_snippet RETURNING id"
)


@dataclass
class _LinkInPost:
    """One link of a post, whatever number of occurrences it has there."""

    first: LinkOccurrence
    outside_quote: bool = False


def apply_feed_post(ctx: ApplyContext, post: FeedPost) -> None:
    """Upsert the post; when its content changed, re-record occurrences and decide jobs."""
    conn = ctx.conn
    seen = iso(post.seen_at)
    row = conn.execute(
        "SELECT id, content_hash FROM discourse_posts WHERE guid = ?", (post.guid,)
    ).fetchone()
    if row is not None and row["content_hash"] == post.content_hash:
        conn.execute(
            "UPDATE discourse_posts SET last_seen_at = max(last_seen_at, ?) WHERE id = ?",
            (seen, row["id"]),
        )
        return
    post_id = int(
        conn.execute(
            "INSERT INTO discourse_posts (guid, post_url, feed_url, forum, topic_url, title,"
            " author_username, published_at, updated_at, content_html, content_hash,"
            " first_seen_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (guid) DO UPDATE SET post_url = excluded.post_url,"
            " feed_url = excluded.feed_url, forum = excluded.forum,"
            " topic_url = excluded.topic_url,"
            " title = excluded.title, author_username = excluded.author_username,"
            " published_at = excluded.published_at, updated_at = excluded.updated_at,"
            " content_html = excluded.content_html, content_hash = excluded.content_hash,"
            " last_seen_at = max(discourse_posts.last_seen_at, excluded.last_seen_at)"
            " RETURNING id",
            (
                post.guid,
                post.post_url,
                post.feed_url,
                forum_of(post.post_url),
                post.topic_url,
                post.title,
                post.author,
                iso_or_none(post.published_at),
                iso_or_none(post.updated_at),
                post.content_html,
                post.content_hash,
                seen,
                seen,
            ),
        ).fetchone()[0]
    )
    in_post = _record_occurrences(ctx, post_id, post.links, seen, edited=row is not None)
    for link_id, link in in_post.items():
        state = transitions.link_state(conn, link_id)
        decision = decide(
            state,
            source="feed",
            now=ctx.now,
            policy=ctx.policy,
            url=_forms(link.first),
            quote_only=not link.outside_quote,
        )
        media.capture_decided(conn, link_id, decision, ctx.policy, ctx.now_iso, state)


def _forms(occ: LinkOccurrence) -> CanonicalUrl:
    """The occurrence's URL forms, as the domain policy reads them."""
    return CanonicalUrl(
        occ.original_url, occ.normalized_url, occ.canonical_url, occ.domain, occ.needs_resolve
    )


def _record_occurrences(
    ctx: ApplyContext, post_id: int, occurrences: list[LinkOccurrence], seen: str, edited: bool
) -> dict[int, _LinkInPost]:
    """Upsert the post's occurrences, drop the ones its new content no longer has."""
    conn = ctx.conn
    links: dict[int, _LinkInPost] = {}
    ids_by_url: dict[str, int] = {}
    kept: list[int] = []
    for occ in occurrences:
        link_id = ids_by_url.get(occ.normalized_url)
        if link_id is None:
            forms = UrlForms(occ.original_url, occ.normalized_url, occ.canonical_url, occ.domain)
            link_id = linkstore.upsert_link(conn, forms, seen, ctx.policy.takedown_key)
            ids_by_url[occ.normalized_url] = link_id
        entry = links.setdefault(link_id, _LinkInPost(occ))
        entry.outside_quote = entry.outside_quote or not occ.in_quote
        params = (link_id, post_id, seen, int(occ.in_quote), occ.context_snippet, occ.original_url)
        if edited:
            kept.append(int(conn.execute(_UPSERT_OCCURRENCE, params).fetchone()[0]))
        else:
            conn.execute(_INSERT_OCCURRENCE, params)
    if not edited:
        return links
    marks = ",".join("?" * len(kept))
    conn.execute(
        f"DELETE FROM link_occurrences WHERE discourse_post_id = ? AND id NOT IN ({marks})",
        (post_id, *kept),
    )
    return links


def apply_feed_gap(ctx: ApplyContext, gap: FeedGap) -> None:
    """Record a gap the poller detected (and how much it backfilled)."""
    ctx.conn.execute(
        "INSERT INTO feed_gaps (feed_url, detected_at, backfilled_posts, closed)"
        " VALUES (?, ?, ?, ?) ON CONFLICT (feed_url, detected_at) DO UPDATE"
        " SET backfilled_posts = excluded.backfilled_posts, closed = excluded.closed",
        (gap.feed_url, iso(gap.detected_at), gap.backfilled_posts, int(gap.closed)),
    )


def move_occurrences(conn: sqlite3.Connection, loser: int, survivor: int) -> None:
    """Dedup merged link `loser` into `survivor`: its occurrences follow (one per post and
    quote flag, the survivor's kept when both have one)."""
    conn.execute(
        "INSERT INTO link_occurrences (link_id, discourse_post_id, seen_at, in_quote,"
        " context_snippet, original_url) SELECT ?, discourse_post_id, seen_at, in_quote,"
        " context_snippet, original_url FROM link_occurrences WHERE link_id = ? ORDER BY id"
        " ON CONFLICT (discourse_post_id, link_id, in_quote) DO NOTHING",
        (survivor, loser),
    )
    conn.execute("DELETE FROM link_occurrences WHERE link_id = ?", (loser,))
