"""A fixture Discourse forum: posts.rss and a topic's JSON in Discourse's format, built from
simple post specs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlsplit
from xml.sax.saxutils import escape

from testkit.httpserver import FixtureServer, Reply


@dataclass
class Post:
    """One forum post."""

    post_id: int
    topic_id: int
    cooked: str
    author: str = "alice"
    title: str = "A topic"
    post_number: int = 1


def posts_rss(base: str, posts: list[Post], host: str = "forum.test") -> bytes:
    """The /posts.rss body Discourse would serve for these posts (newest first)."""
    now = datetime(2026, 11, 1, tzinfo=UTC)
    items = []
    for p in sorted(posts, key=lambda p: p.post_id, reverse=True):
        when = format_datetime(now + timedelta(minutes=p.post_id))
        items.append(
            f"""<item>
<title>{escape(p.title)}</title>
<dc:creator><![CDATA[@{p.author}]]></dc:creator>
<description><![CDATA[ {p.cooked} ]]></description>
<link>{base}/t/topic/{p.topic_id}#post_{p.post_number}</link>
<pubDate>{when}</pubDate>
<discourse:topicPinned>No</discourse:topicPinned>
<guid isPermaLink="false">{host}-post-{p.post_id}</guid>
</item>"""
        )
    return f"""<?xml version="1.0" encoding="UTF-8" ?>
<rss version="2.0" xmlns:discourse="http://www.discourse.org/"
 xmlns:atom="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel>
<title>Fixture forum - Latest posts</title>
<link>{base}</link>
<description>Latest posts</description>
{"".join(items)}
</channel>
</rss>""".encode()


def topic_json(base: str, topic_id: int, posts: list[Post], shown: int = 20) -> dict[str, Any]:
    """`/t/{id}.json` as Discourse serves it: the topic, its first `shown` posts in
    `post_stream.posts` and every post id in `post_stream.stream`."""
    return {
        "id": topic_id,
        "title": posts[0].title if posts else "A topic",
        "slug": "topic",
        "archetype": "regular",
        "posts_count": len(posts),
        "post_stream": {
            "posts": [post_json(base, p) for p in posts[:shown]],
            "stream": [p.post_id for p in posts],
        },
    }


def post_json(base: str, p: Post) -> dict[str, Any]:
    """One post of Discourse's topic JSON (no topic title: `/t/{id}/posts.json` has none)."""
    when = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(minutes=p.post_id)
    return {
        "id": p.post_id,
        "topic_id": p.topic_id,
        "topic_slug": "topic",
        "post_number": p.post_number,
        "username": p.author,
        "created_at": when.isoformat().replace("+00:00", "Z"),
        "updated_at": when.isoformat().replace("+00:00", "Z"),
        "cooked": p.cooked,
        "post_url": f"/t/topic/{p.topic_id}/{p.post_number}",
    }


def serve_topic(server: FixtureServer, topic_id: int, posts: list[Post]) -> list[list[int]]:
    """Serve a topic on `server` as Discourse does: `/t/{id}.json` and
    `/t/{id}/posts.json?post_ids[]=..` (at most 20 ids answered a request). Returns the list
    the ids of every posts.json request are appended to."""
    asked: list[list[int]] = []
    by_id = {p.post_id: p for p in posts}

    def page(h: BaseHTTPRequestHandler) -> Reply:
        ids = [int(v) for k, v in parse_qsl(urlsplit(h.path).query) if k == "post_ids[]"]
        asked.append(ids)
        found = [post_json(server.base, by_id[i]) for i in ids[:20] if i in by_id]
        return Reply(json.dumps({"post_stream": {"posts": found}}).encode(), headers=JSON)

    body = json.dumps(topic_json(server.base, topic_id, posts)).encode()
    server.routes[f"/t/{topic_id}.json"] = Reply(body, headers=JSON)
    server.routes[f"/t/{topic_id}/posts.json"] = page
    return asked


JSON = {"Content-Type": "application/json; charset=utf-8"}


TOPIC_SIZE = 45
"""Posts of `linked_topic`: three pages of Discourse's (20 with the topic, then 20 and 5)."""
OWN_LINKS = [n for n in range(1, TOPIC_SIZE + 1) if n % 3 == 0]
"""Post numbers of `linked_topic` with a link of their own."""
QUOTED_LINKS = [n for n in range(1, TOPIC_SIZE + 1) if n % 5 == 0]
"""Post numbers of `linked_topic` quoting a link (some have both)."""


def linked_topic(topic_id: int, own: str, quoted: str, first_id: int = 100) -> list[Post]:
    """A topic of TOPIC_SIZE posts (ids first_id + n): post n links `own.format(n)` in its
    own words when n is in OWN_LINKS, and quotes `quoted.format(n)` when in QUOTED_LINKS."""
    posts = []
    for n in range(1, TOPIC_SIZE + 1):
        html = f'<p>post {n} <a href="{own.format(n)}">read</a></p>' if n in OWN_LINKS else ""
        if n in QUOTED_LINKS:
            html = (
                '<aside class="quote" data-username="bob"><blockquote><p>'
                f'<a href="{quoted.format(n)}">quoted</a></p></blockquote></aside>{html}'
            )
        cooked = html or f"<p>post {n}, no link</p>"
        posts.append(Post(first_id + n, topic_id, cooked, title="Lost threads", post_number=n))
    return posts
