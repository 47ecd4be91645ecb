"""A fixture Discourse forum: posts.rss in Discourse's format, built from simple post specs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from xml.sax.saxutils import escape


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
