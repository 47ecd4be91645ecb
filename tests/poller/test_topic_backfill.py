"""A whole topic read on request (`poller.backfill`): the real poller loop on a real
nats-server, a fixture Discourse forum serving a 45-post topic in three pages."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from services.poller.service import Poller
from services.poller.settings import PollerSettings
from shared import bus
from shared.backfill import request_backfill
from shared.discourse import NotATopic
from shared.lifecycle import ServiceContext
from shared.messages import BackfillReport, BackfillRequest, FeedPost
from shared.subjects import FEED, POLLER_BACKFILL
from testkit.forum import (
    JSON,
    OWN_LINKS,
    QUOTED_LINKS,
    linked_topic,
    posts_rss,
    serve_topic,
)
from testkit.httpserver import FixtureServer, Reply
from testkit.waiting import until

pytestmark = pytest.mark.integration

TOPIC = 7
POSTS = linked_topic(
    TOPIC, "https://www.reddit.com/r/own/comments/p{}/t/", "https://x.com/b/status/{}"
)
OWN, QUOTED = OWN_LINKS, QUOTED_LINKS


@dataclass
class Forum:
    server: FixtureServer
    asked: list[list[int]]

    @property
    def feed(self) -> str:
        return f"{self.server.base}/posts.rss"


@pytest.fixture
def forum() -> Iterator[Forum]:
    with FixtureServer() as server:
        # the feed shows the topic's last post, with Discourse's guid (not the URL's host)
        rss = posts_rss(server.base, POSTS[-1:])
        server.routes["/posts.rss"] = Reply(rss, headers={"Content-Type": "application/rss+xml"})
        asked = serve_topic(server, TOPIC, POSTS)
        server.routes["/t/404.json"] = Reply(b'{"errors":["not found"]}', 404, JSON)
        server.routes["/t/403.json"] = Reply(
            b'{"errors":["You are not permitted to view the requested resource."],'
            b'"error_type":"invalid_access"}',
            403,
            JSON,
        )
        server.routes["/t/500.json"] = Reply(b'{"post_stream": {"posts": [', 200, JSON)
        pm = {"archetype": "private_message", "post_stream": {"posts": [], "stream": []}}
        server.routes["/t/501.json"] = Reply(json.dumps(pm).encode(), headers=JSON)
        broken = {"title": "t", "post_stream": {"posts": [], "stream": [1, 2]}}
        server.routes["/t/502.json"] = Reply(json.dumps(broken).encode(), headers=JSON)
        server.routes["/t/502/posts.json"] = Reply(b"<html>oops</html>", headers={})
        yield Forum(server, asked)


@pytest.fixture
async def poller(nats_url: str, tmp_path: Path, forum: Forum) -> AsyncIterator[ServiceContext]:
    nc = await bus.connect(nats_url, "test-topic-backfill")
    js = nc.jetstream()
    await bus.ensure_streams(js)
    settings = PollerSettings(data_dir=tmp_path, feeds=[forum.feed], poll_interval_seconds=3600)
    ctx = ServiceContext("poller", settings, nc, js, asyncio.Event())
    task = asyncio.create_task(Poller(ctx, settings).run())
    await until(lambda: published(ctx), 30, "the first poll publishing the feed's one post")
    yield ctx
    ctx.stop.set()
    await task
    await nc.close()


async def published(ctx: ServiceContext) -> list[FeedPost]:
    info = await ctx.js.stream_info(FEED.name)
    out = []
    for seq in range(1, info.state.last_seq + 1):
        msg = await ctx.js.get_msg(FEED.name, seq)
        if msg.subject == "feed.post":
            out.append(FeedPost.model_validate_json(msg.data or b""))
    return out


async def test_every_post_of_a_topic_is_published_with_its_quote_flags(
    poller: ServiceContext, forum: Forum
) -> None:
    url = f"{forum.server.base}/t/lost-threads/{TOPIC}/12?u=alice"
    report = await request_backfill(poller.nc, url, timeout=60)
    assert report.error is None, report
    assert (report.posts, report.links, report.quoted) == (45, len(OWN) + len(QUOTED), len(QUOTED))
    assert report.forum == f"127.0.0.1:{forum.server.port}"
    # the first 20 posts came with the topic, the other 25 in two pages of at most 20
    assert [len(a) for a in forum.asked] == [20, 5]
    posts = {p.guid: p for p in await published(poller)}
    assert sorted(posts) == sorted(f"forum.test-post-{100 + n}" for n in range(1, 46))
    for n in range(1, 46):
        post = posts[f"forum.test-post-{100 + n}"]
        assert post.feed_url == forum.feed
        shown = f"/t/topic/{TOPIC}#post_45" if n == 45 else f"/t/topic/{TOPIC}/{n}"  # the feed's
        assert post.post_url == forum.server.base + shown
        assert post.topic_url == f"{forum.server.base}/t/topic/{TOPIC}"
        assert post.title == "Lost threads" and post.author == "alice"
        flags = sorted((link.domain, link.in_quote) for link in post.links)
        expected = [("old.reddit.com", False)] * (n in OWN) + [("x.com", True)] * (n in QUOTED)
        assert flags == sorted(expected), n
    # the poll published post 145 as the feed showed it; the topic's copy had the same guid
    # and content, so JetStream kept one message of it
    assert len(await published(poller)) == 45


async def test_topic_urls_as_people_paste_them(poller: ServiceContext, forum: Forum) -> None:
    base = forum.server.base
    for url in (f"{base}/t/lost-threads/{TOPIC}", f"{base}/t/{TOPIC}", f"{base}/t/{TOPIC}/3"):
        report = await request_backfill(poller.nc, url, timeout=60)
        assert (report.error, report.posts) == (None, 45), url


@pytest.mark.parametrize(
    ("path", "reason", "words"),
    [
        ("/t/x/404", "not_found", "not found"),
        ("/t/x/403", "private", "private topic"),
        ("/t/x/500", "malformed", "not a JSON object"),
        ("/t/x/501", "private", "private message"),
        ("/t/x/502", "malformed", "not a JSON object"),
    ],
)
async def test_a_bad_topic_is_a_clear_error_and_publishes_nothing(
    poller: ServiceContext, forum: Forum, path: str, reason: str, words: str
) -> None:
    before = len(await published(poller))
    report = await request_backfill(poller.nc, forum.server.base + path, timeout=60)
    assert (report.reason, report.posts) == (reason, 0)
    assert report.error is not None and words in report.error
    assert len(await published(poller)) == before


async def test_a_topic_of_a_forum_not_watched_is_never_fetched(
    poller: ServiceContext, forum: Forum
) -> None:
    with FixtureServer() as other:
        serve_topic(other, TOPIC, POSTS)
        report = await request_backfill(poller.nc, f"{other.base}/t/x/{TOPIC}", timeout=60)
        assert other.requests == []
    assert report.reason == "not_watched"
    assert report.error is not None and f"127.0.0.1:{forum.server.port}" in report.error


async def test_a_url_that_is_no_topic_is_refused_by_asker_and_poller(
    poller: ServiceContext, forum: Forum
) -> None:
    with pytest.raises(NotATopic):
        await request_backfill(poller.nc, f"{forum.server.base}/c/general/4", timeout=60)
    body = BackfillRequest(topic_url="ftp://forum/t/x/1").model_dump_json().encode()
    reply = await poller.nc.request(POLLER_BACKFILL, body, timeout=60)
    report = BackfillReport.model_validate_json(reply.data)
    assert report.reason == "not_a_topic" and report.posts == 0
    reply = await poller.nc.request(POLLER_BACKFILL, b"{not json", timeout=60)
    assert BackfillReport.model_validate_json(reply.data).reason == "invalid"


def test_several_feeds_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FEEDS", "https://a.test/posts.rss, https://B.test/Posts.rss,")
    assert PollerSettings().feeds == ["https://a.test/posts.rss", "https://B.test/Posts.rss"]
