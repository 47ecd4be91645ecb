"""Reading posts from Discourse's JSON: closing gaps (posts.rss shows only the latest posts,
so when a poll shares no post with the previous one, the missed posts are fetched from
`/posts.json?before=<id>`) and reading a whole topic (`read_topic`: `/t/<id>.json`, then the
rest of its post ids 20 at a time from `/t/<id>/posts.json?post_ids[]=...`)."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from services.poller.feed_fetch import (
    DISCOURSE_GUID,
    FeedError,
    FeedItem,
    FeedState,
    content_hash,
    fetch_errors,
    read_capped,
    status_error,
)
from shared.discourse import TopicRef

log = logging.getLogger(__name__)

TOPIC_PAGE = 20
"""Post ids asked for in one `/t/<id>/posts.json` request (Discourse's own page size)."""


def item_from_json(
    post: dict[str, Any], base: str, guid_prefix: str, title: str | None = None
) -> FeedItem:
    """A post of Discourse's JSON as the feed item posts.rss would have given (its guid
    `<prefix>-post-<id>`, so the writer sees the same post whichever way it came)."""
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
        title=post.get("topic_title") or title or None,
        author=post.get("username") or None,
        published_at=when("created_at"),
        updated_at=when("updated_at"),
        content_html=html,
        content_hash=content_hash(html),
    )


async def get_json(
    client: httpx.AsyncClient,
    url: str,
    params: httpx.QueryParams | None,
    max_bytes: int,
) -> dict[str, Any]:
    """GET a JSON object (at most max_bytes); FeedError with the reason otherwise:
    not_found (404/410), private (401/403: a private topic or a forum behind a login),
    http_status, too_large, timeout, network, malformed (not a JSON object)."""
    with fetch_errors(url):
        async with client.stream("GET", url, params=params) as resp:
            if resp.status_code in (404, 410):
                raise FeedError("not_found", f"{url}: not found (HTTP {resp.status_code})")
            if resp.status_code in (401, 403):
                raise FeedError(
                    "private",
                    f"{url}: refused (HTTP {resp.status_code}): a private topic, or the forum"
                    " needs a login",
                )
            if resp.status_code >= 400:
                raise status_error(resp, url)
            body = await read_capped(resp, max_bytes, url)
    try:
        data = httpx.Response(200, content=body).json()
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise FeedError("malformed", f"{url}: not a JSON object: {body[:60]!r}")
    return data


def _posts_of(data: dict[str, Any], url: str) -> list[dict[str, Any]]:
    """`post_stream.posts` of a topic answer, each with a numeric id (FeedError otherwise)."""
    stream = data.get("post_stream")
    posts = stream.get("posts") if isinstance(stream, dict) else None
    if not isinstance(posts, list) or not all(
        isinstance(p, dict) and str(p.get("id", "")).isdigit() for p in posts
    ):
        raise FeedError("malformed", f"{url}: no post_stream.posts with post ids")
    return posts


async def read_topic(
    client: httpx.AsyncClient, topic: TopicRef, guid_prefix: str, max_bytes: int
) -> list[FeedItem]:
    """Every post of a topic, in the topic's order: `/t/<id>.json` (its first posts and
    every post id), then the other ids TOPIC_PAGE at a time. FeedError when any request
    fails or the topic is a private message (nothing is returned in part)."""
    url = f"{topic.base}/t/{topic.topic_id}.json"
    data = await get_json(client, url, None, max_bytes)
    if data.get("archetype") == "private_message":
        raise FeedError("private", f"{url}: a private message, not a public topic")
    posts = _posts_of(data, url)
    ids = (data.get("post_stream") or {}).get("stream")
    if not isinstance(ids, list) or not all(str(i).isdigit() for i in ids):
        raise FeedError("malformed", f"{url}: no post_stream.stream of post ids")
    by_id = {int(p["id"]): p for p in posts}
    rest = [int(i) for i in ids if int(i) not in by_id]
    page_url = f"{topic.base}/t/{topic.topic_id}/posts.json"
    for start in range(0, len(rest), TOPIC_PAGE):
        page = httpx.QueryParams([("post_ids[]", i) for i in rest[start : start + TOPIC_PAGE]])
        found = await get_json(client, page_url, page, max_bytes)
        by_id |= {int(p["id"]): p for p in _posts_of(found, page_url)}
    order = [int(i) for i in ids] + sorted(set(by_id) - {int(i) for i in ids})
    title = str(data.get("title") or "") or None
    return [item_from_json(by_id[i], topic.base, guid_prefix, title) for i in order if i in by_id]


async def backfill(
    client: httpx.AsyncClient,
    feed_url: str,
    items: list[FeedItem],
    state: FeedState,
    max_pages: int,
    max_bytes: int,
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
            page = httpx.QueryParams({"before": before})
            found = await get_json(client, f"{base}/posts.json", page, max_bytes)
        except FeedError as exc:
            raise FeedError("backfill", f"backfill from {base} failed: {exc}") from exc
        posts = found.get("latest_posts") or []
        if not isinstance(posts, list) or not all(isinstance(p, dict) for p in posts):
            raise FeedError("backfill", f"backfill from {base} failed: no latest_posts list")
        page_ids = [int(p["id"]) for p in posts if str(p.get("id", "")).isdigit()]
        if not page_ids:
            return missed, False
        for post in posts:
            if str(post.get("id", "")).isdigit() and int(post["id"]) > state.max_post_id:
                missed.append(item_from_json(post, base, guid_prefix))
        if min(page_ids) <= state.max_post_id:
            return missed, True
        before = min(page_ids)
    log.warning(
        "backfill of %s stopped after %d pages without closing the gap", feed_url, max_pages
    )
    return missed, False
