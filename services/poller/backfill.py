"""Closing gaps: Discourse's posts.rss shows only the latest posts, so when a poll shares no
post with the previous one, the missed posts are fetched from `/posts.json?before=<id>`."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from services.poller.feed_fetch import DISCOURSE_GUID, FeedError, FeedItem, FeedState, content_hash

log = logging.getLogger(__name__)


def _item_from_json(post: dict[str, Any], base: str, guid_prefix: str) -> FeedItem:
    html = str(post.get("cooked") or "")
    path = str(post.get("post_url") or "")
    if not path:
        path = f"/t/{post.get('topic_slug', 'x')}/{post.get('topic_id')}/{post.get('post_number')}"

    def when(key: str) -> datetime | None:
        value = post.get(key)
        try:
            return datetime.fromisoformat(str(value).replace("Z", "+00:00")) if value else None
        except ValueError:
            return None

    return FeedItem(
        guid=f"{guid_prefix}-post-{post['id']}",
        post_url=urljoin(base, path),
        title=post.get("topic_title") or None,
        author=post.get("username") or None,
        published_at=when("created_at"),
        updated_at=when("updated_at"),
        content_html=html,
        content_hash=content_hash(html),
    )


async def backfill(
    client: httpx.AsyncClient,
    feed_url: str,
    items: list[FeedItem],
    state: FeedState,
    max_pages: int,
) -> tuple[list[FeedItem], bool]:
    """Missed posts between the previous poll and this one, and whether the gap closed.

    Feeds that are not Discourse (no `-post-<id>` guids) return ([], False).
    """
    ids = [i.discourse_id for i in items if i.discourse_id is not None]
    first = DISCOURSE_GUID.match(items[0].guid) if items else None
    if not ids or first is None or state.max_post_id is None:
        return [], False
    parts = urlsplit(feed_url)
    base = f"{parts.scheme}://{parts.netloc}"
    guid_prefix = first.group("prefix")
    before = min(ids)
    missed: list[FeedItem] = []
    for _ in range(max_pages):
        try:
            resp = await client.get(f"{base}/posts.json", params={"before": before})
            resp.raise_for_status()
            posts = resp.json().get("latest_posts") or []
        except (httpx.HTTPError, ValueError, AttributeError) as exc:
            raise FeedError("backfill", f"backfill from {base} failed: {exc}") from exc
        page_ids = [int(p["id"]) for p in posts if str(p.get("id", "")).isdigit()]
        if not page_ids:
            return missed, False
        for post in posts:
            if str(post.get("id", "")).isdigit() and int(post["id"]) > state.max_post_id:
                missed.append(_item_from_json(post, base, guid_prefix))
        if min(page_ids) <= state.max_post_id:
            return missed, True
        before = min(page_ids)
    log.warning(
        "backfill of %s stopped after %d pages without closing the gap", feed_url, max_pages
    )
    return missed, False
