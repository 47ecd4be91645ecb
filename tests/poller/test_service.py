"""The poller against a fixture forum and a real nats-server."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from services.poller.service import Poller
from services.poller.settings import PollerSettings
from shared import bus
from shared.lifecycle import ServiceContext
from shared.messages import FeedGap, FeedPost
from shared.subjects import FEED
from testkit.forum import Post, posts_rss
from testkit.httpserver import FixtureServer, Reply

pytestmark = pytest.mark.integration


@pytest.fixture
async def ctx(nats_url: str, tmp_path: Path) -> AsyncIterator[ServiceContext]:
    nc = await bus.connect(nats_url, "test-poller")
    js = nc.jetstream()
    await bus.ensure_streams(js)
    settings = PollerSettings(data_dir=tmp_path, rss_url="http://unused/posts.rss")
    yield ServiceContext("poller", settings, nc, js, asyncio.Event())
    await nc.close()


async def published(ctx: ServiceContext) -> list[FeedPost | FeedGap]:
    info = await ctx.js.stream_info(FEED.name)
    out: list[FeedPost | FeedGap] = []
    for seq in range(1, info.state.last_seq + 1):
        msg = await ctx.js.get_msg(FEED.name, seq)
        model = FeedGap if msg.subject == "feed.gap" else FeedPost
        out.append(model.model_validate_json(msg.data or b""))
    return out


def poller_for(ctx: ServiceContext, url: str, **extra: object) -> Poller:
    assert isinstance(ctx.settings, PollerSettings)
    settings = ctx.settings.model_copy(update={"feeds": [url], **extra})
    return Poller(ctx, settings)


async def poll(poller: Poller, url: str) -> None:
    import httpx

    async with httpx.AsyncClient(timeout=5) as client:
        await poller.poll(client, url)


async def test_changing_etags_do_not_republish_unchanged_posts(ctx: ServiceContext) -> None:
    counter = itertools.count()
    posts = [Post(1, 1, '<p><a href="https://www.reddit.com/r/a/comments/x1/t/">r</a></p>')]
    with FixtureServer() as forum:
        forum.routes["/posts.rss"] = lambda _: Reply(
            posts_rss(forum.base, posts), headers={"ETag": f'"{next(counter)}"'}
        )
        poller = poller_for(ctx, f"{forum.base}/posts.rss")
        for _ in range(3):
            await poll(poller, f"{forum.base}/posts.rss")
        posts[0] = Post(1, 1, posts[0].cooked + "<p>edited</p>")
        await poll(poller, f"{forum.base}/posts.rss")
    msgs = await published(ctx)
    assert len(msgs) == 2, "the post once, then its edit"
    first = msgs[0]
    assert isinstance(first, FeedPost)
    (link,) = first.links
    assert link.canonical_url == "https://old.reddit.com/r/a/comments/x1/t/"
    assert not link.in_quote


async def test_the_same_body_again_is_not_parsed_again(ctx: ServiceContext) -> None:
    """A server without ETag or Last-Modified: the same bytes count as not modified (no parse),
    a changed body is read as usual."""
    from services.poller.metrics import POLLS, feed_label

    posts = [Post(1, 1, '<p><a href="https://example.org/a">a</a></p>')]
    with FixtureServer() as forum:
        url = f"{forum.base}/posts.rss"
        forum.routes["/posts.rss"] = lambda _: Reply(posts_rss(forum.base, posts))
        poller = poller_for(ctx, url)
        counts = [POLLS.labels(feed_label(url), kind) for kind in ("ok", "not_modified")]
        before = [c._value.get() for c in counts]  # the registry is the process's

        def polled() -> list[float]:
            return [c._value.get() - b for c, b in zip(counts, before, strict=True)]

        for _ in range(3):
            await poll(poller, url)
        assert polled() == [1, 2]
        posts[0] = Post(1, 1, posts[0].cooked + "<p>edited</p>")
        await poll(poller, url)
        assert polled() == [2, 2]
    assert len(await published(ctx)) == 2, "the post once, then its edit"


async def test_a_post_with_5000_links_is_published_whole(ctx: ServiceContext) -> None:
    cooked = "".join(f'<p><a href="https://x.com/u/status/{i}">{i}</a></p>' for i in range(5000))
    with FixtureServer() as forum:
        forum.routes["/posts.rss"] = Reply(posts_rss(forum.base, [Post(9, 1, cooked)]))
        await poll(poller_for(ctx, f"{forum.base}/posts.rss"), f"{forum.base}/posts.rss")
    (msg,) = await published(ctx)
    assert isinstance(msg, FeedPost) and len(msg.links) == 5000


async def test_credentials_pasted_into_a_post_are_never_published(ctx: ServiceContext) -> None:
    cooked = (
        '<p>login at <a href="https://bob:hunter2@intranet.example.com/x">'
        "https://bob:hunter2@intranet.example.com/x</a> or "
        "ftp://anon:s3cret&#64;files.example.org/ and mail bob@example.com</p>"
    )
    post = Post(3, 1, cooked, title="see https://carol:pw123@example.net/")
    with FixtureServer() as forum:
        forum.routes["/posts.rss"] = Reply(posts_rss(forum.base, [post]))
        await poll(poller_for(ctx, f"{forum.base}/posts.rss"), f"{forum.base}/posts.rss")
    (msg,) = await published(ctx)
    assert isinstance(msg, FeedPost)
    text = msg.model_dump_json()
    for secret in ("hunter2", "s3cret", "pw123", "bob:", "anon:", "carol:"):
        assert secret not in text, secret
    assert "https://intranet.example.com/x" in msg.content_html
    assert "bob@example.com" in msg.content_html  # an e-mail address is not a credential
    (link,) = [occ for occ in msg.links if "intranet" in occ.canonical_url]
    assert link.original_url == "https://intranet.example.com/x"
    assert "intranet.example.com/x" in (link.context_snippet or "")


async def test_a_bad_feed_is_counted_and_the_next_good_poll_works(ctx: ServiceContext) -> None:
    replies = [Reply(b"<html>down for maintenance", 503), Reply(b"not xml \x00"), None]
    with FixtureServer() as forum:
        good = Reply(posts_rss(forum.base, [Post(1, 1, "<p>hi</p>")]))
        forum.routes["/posts.rss"] = lambda _: replies.pop(0) or good
        poller = poller_for(ctx, f"{forum.base}/posts.rss")
        for _ in range(3):
            await poll(poller, f"{forum.base}/posts.rss")
    assert [type(m) for m in await published(ctx)] == [FeedPost]


async def test_a_gap_between_polls_is_backfilled_and_recorded(ctx: ServiceContext) -> None:
    import json

    with FixtureServer() as forum:
        shown = [Post(i, 1, f"<p>{i}</p>") for i in (1, 2)]
        forum.routes["/posts.rss"] = lambda _: Reply(posts_rss(forum.base, shown))
        api: list[dict[str, Any]] = [
            {"id": i, "cooked": f"<p>{i}</p>", "post_url": f"/t/t/1/{i}"} for i in range(9, 0, -1)
        ]
        forum.routes["/posts.json"] = lambda h: Reply(
            json.dumps(
                {"latest_posts": [p for p in api if p["id"] < int(h.path.split("=")[1])]}
            ).encode()
        )
        poller = poller_for(ctx, f"{forum.base}/posts.rss")
        await poll(poller, f"{forum.base}/posts.rss")
        shown[:] = [Post(i, 1, f"<p>{i}</p>") for i in (8, 9)]  # 3..7 never shown in the feed
        await poll(poller, f"{forum.base}/posts.rss")
    msgs = await published(ctx)
    gaps = [m for m in msgs if isinstance(m, FeedGap)]
    assert len(gaps) == 1 and gaps[0].closed and gaps[0].backfilled_posts == 5
    guids = sorted(m.guid for m in msgs if isinstance(m, FeedPost))
    assert guids == sorted(f"forum.test-post-{i}" for i in range(1, 10))


async def test_position_survives_a_restart_and_the_gap_is_backfilled(
    ctx: ServiceContext,
) -> None:
    import json

    with FixtureServer() as forum:
        url = f"{forum.base}/posts.rss"
        shown = [Post(i, 1, f"<p>{i}</p>") for i in (1, 2)]
        forum.routes["/posts.rss"] = lambda _: Reply(posts_rss(forum.base, shown))
        api: list[dict[str, Any]] = [
            {"id": i, "cooked": f"<p>{i}</p>", "post_url": f"/t/t/1/{i}"} for i in range(9, 0, -1)
        ]
        forum.routes["/posts.json"] = lambda h: Reply(
            json.dumps(
                {"latest_posts": [p for p in api if p["id"] < int(h.path.split("=")[1])]}
            ).encode()
        )
        await poll(poller_for(ctx, url), url)
        # The poller process is gone (a new one knows nothing in memory); posts 3..9 were
        # made meanwhile and the feed shows only the newest two.
        shown[:] = [Post(i, 1, f"<p>{i}</p>") for i in (8, 9)]
        restarted = poller_for(ctx, url)
        await poll(restarted, url)
        assert restarted.states[url].max_post_id == 9
    msgs = await published(ctx)
    gaps = [m for m in msgs if isinstance(m, FeedGap)]
    assert len(gaps) == 1 and gaps[0].closed and gaps[0].backfilled_posts == 5
    guids = [m.guid for m in msgs if isinstance(m, FeedPost)]
    assert sorted(guids) == sorted(f"forum.test-post-{i}" for i in range(1, 10))
    assert len(guids) == len(set(guids)), "nothing published twice"


async def test_backfill_is_bounded_and_says_so(ctx: ServiceContext) -> None:
    import json

    with FixtureServer() as forum:
        url = f"{forum.base}/posts.rss"
        shown = [Post(1, 1, "<p>1</p>")]
        forum.routes["/posts.rss"] = lambda _: Reply(posts_rss(forum.base, shown))
        api: list[dict[str, Any]] = [{"id": i, "cooked": f"<p>{i}</p>"} for i in range(100, 0, -1)]
        forum.routes["/posts.json"] = lambda h: Reply(
            json.dumps(
                {"latest_posts": [p for p in api if p["id"] < int(h.path.split("=")[1])][:10]}
            ).encode()
        )
        await poll(poller_for(ctx, url), url)
        shown[:] = [Post(100, 1, "<p>100</p>")]
        await poll(poller_for(ctx, url, backfill_max_pages=2), url)
    gaps = [m for m in await published(ctx) if isinstance(m, FeedGap)]
    assert len(gaps) == 1 and not gaps[0].closed and gaps[0].backfilled_posts == 20


async def test_an_empty_body_is_a_counted_failure_and_publishes_nothing(
    ctx: ServiceContext,
) -> None:
    from prometheus_client import REGISTRY

    with FixtureServer() as forum:
        url = f"{forum.base}/posts.rss"
        forum.routes["/posts.rss"] = Reply(b"")
        await poll(poller_for(ctx, url), url)
    from services.poller.metrics import feed_label

    labels = {"feed": feed_label(url), "outcome": "empty"}
    assert REGISTRY.get_sample_value("dla_poller_polls_total", labels) == 1
    assert await published(ctx) == []


async def test_a_feeds_health_says_since_when_it_fails_and_a_quiet_feed_is_healthy(
    ctx: ServiceContext,
) -> None:
    """Two failed polls, then an answer, then the same answer again (nothing new on the
    forum: still an answer). The report stored for the owner (shared.feed_health, read as
    the web reads it) and the alerting gauge follow each; the feed's password is masked."""
    from services.poller.metrics import LAST_OK, feed_label
    from services.poller.service import feeds_check
    from shared.feed_health import read_all

    replies = [Reply(b"<html>down for maintenance", 503), Reply(b"<html>a login page")]
    with FixtureServer() as forum:
        good = Reply(posts_rss(forum.base, [Post(1, 1, "<p>hi</p>")]))
        forum.routes["/posts.rss"] = lambda _: replies.pop(0) if replies else good
        url = f"{forum.base}/posts.rss".replace("://", "://reader:s3cret-word@")
        poller = poller_for(ctx, url)
        assert await read_all(ctx.js) == []  # nothing polled yet
        await poll(poller, url)
        (first,) = await read_all(ctx.js)
        assert (first.ok, first.failures, first.last_success) == (False, 1, None)
        assert first.error is not None and first.error.startswith("http_status: HTTP 503")
        assert first.feed == url.replace("s3cret-word", "***")
        await poll(poller, url)
        (second,) = await read_all(ctx.js)
        assert (second.failing_since, second.failures) == (first.failing_since, 2)
        assert second.error is not None and second.error.startswith("not_a_feed")
        shown = await feeds_check(poller)()
        assert "s3cret-word" not in str(shown) and "reader:***@" in str(shown)
        for _ in range(2):  # a post, then nothing new
            await poll(poller, url)
            (report,) = await read_all(ctx.js)
            assert report.ok and report.error is None and report.failing_since is None
            assert report.last_success is not None
            gauge = LAST_OK.labels(feed_label(url))._value.get()
            assert gauge == report.last_success.timestamp()
    assert [type(m) for m in await published(ctx)] == [FeedPost]


async def test_a_restarted_poller_resumes_a_failing_feeds_health(ctx: ServiceContext) -> None:
    """The feed answered, then failed twice; a poller started again (nothing in memory) and
    failing once more still says since when it fails and how often, and the gauge the alert
    on a silent feed reads keeps the last answer's time (a restart had cleared it, and the
    alert resolved while the feed still failed)."""
    from prometheus_client import REGISTRY

    from services.poller.metrics import LAST_OK, feed_label
    from shared.feed_health import read_all

    with FixtureServer() as forum:
        good = Reply(posts_rss(forum.base, [Post(1, 1, "<p>hi</p>")]))
        replies = [good, Reply(b"down", 502), Reply(b"down", 502)]
        forum.routes["/posts.rss"] = lambda _: replies.pop(0) if replies else Reply(b"x", 502)
        url = f"{forum.base}/posts.rss"
        first = poller_for(ctx, url)
        for _ in range(3):
            await poll(first, url)
        (before,) = await read_all(ctx.js)
        gauge = ("dla_poller_last_success_timestamp_seconds", {"feed": feed_label(url)})
        LAST_OK.remove(feed_label(url))  # a new process exports nothing until told
        restarted = poller_for(ctx, url)
        await poll(restarted, url)
        (after,) = await read_all(ctx.js)
    assert before.last_success is not None and before.failures == 2
    assert after.failing_since == before.failing_since and after.failures == 3
    assert after.last_success == before.last_success
    assert REGISTRY.get_sample_value(*gauge) == before.last_success.timestamp()


async def test_a_feed_that_never_answered_exports_since_when_it_fails(
    ctx: ServiceContext,
) -> None:
    """It has no last success for `NoSuccessfulPoll` to read: the gauge of since when it
    fails stands in (deploy/prometheus/alerts.yml), and is gone once it answers."""
    from prometheus_client import REGISTRY

    from services.poller.metrics import feed_label
    from shared.feed_health import read_all

    replies = [Reply(b"not found", 404), Reply(b"not found", 404)]
    with FixtureServer() as forum:
        good = Reply(posts_rss(forum.base, []))
        forum.routes["/posts.rss"] = lambda _: replies.pop(0) if replies else good
        url = f"{forum.base}/never/posts.rss"
        forum.routes["/never/posts.rss"] = forum.routes["/posts.rss"]
        poller = poller_for(ctx, url)
        gauge = ("dla_poller_failing_since_timestamp_seconds", {"feed": feed_label(url)})
        for _ in range(2):
            await poll(poller, url)
        (failing,) = await read_all(ctx.js)
        exported = REGISTRY.get_sample_value(*gauge)
        await poll(poller, url)
    assert failing.last_success is None and failing.failing_since is not None
    assert exported == failing.failing_since.timestamp()
    assert REGISTRY.get_sample_value(*gauge) is None


async def test_a_forum_asking_to_wait_is_not_asked_again_before(ctx: ServiceContext) -> None:
    """Discourse answers a client over its rate limit 429 with Retry-After: the poller keeps
    polling its other feeds but not that one until the wait is over, a poller started again
    keeps the wait (it is stored with the feed's position), and the feed's health says what
    the forum answered and until when it is not asked."""
    from shared.feed_health import read_all

    # what Discourse's RequestsRateLimiter middleware answers (its body, its two headers)
    limited = Reply(
        b"Slow down, too many requests from this IP address.\n"
        b"Please retry again in 3600 seconds.\nError code: ip_10_secs_limit.\n",
        429,
        {"Content-Type": "text/plain", "Retry-After": "3600",
         "Discourse-Rate-Limit-Error-Code": "ip_10_secs_limit"},
    )  # fmt: skip
    with FixtureServer() as forum:
        url = f"{forum.base}/posts.rss"
        forum.routes["/posts.rss"] = limited
        poller = poller_for(ctx, url)
        asked_at = time.time()
        for _ in range(3):
            await poll(poller, url)
        restarted = poller_for(ctx, url)  # a new process knows nothing in memory
        for _ in range(2):
            await poll(restarted, url)
        asked = [path for path, _ in forum.requests if path == "/posts.rss"]
        (health,) = await read_all(ctx.js)
        # an hour later
        wait_until = restarted.states[url].wait_until
        assert wait_until is not None and 3590 < wait_until - asked_at < 3610
        restarted.states[url].wait_until = wait_until - 3600
        forum.routes["/posts.rss"] = Reply(posts_rss(forum.base, []))
        await poll(restarted, url)
        again = [path for path, _ in forum.requests if path == "/posts.rss"]
        (after,) = await read_all(ctx.js)
    assert len(asked) == 1, "asked once, then the wait is kept, by the restarted poller too"
    assert not health.ok and "asks to wait 3600 s" in (health.error or "")
    assert health.wait_until is not None
    assert abs(health.wait_until.timestamp() - wait_until) < 1
    assert len(again) == 2
    assert after.ok and after.wait_until is None


async def test_a_wait_stored_before_the_clock_was_set_back_is_cut_to_a_day(
    ctx: ServiceContext,
) -> None:
    """A wait read back from the position store that lies further off than the longest wait
    kept (a day: the clock was set back since) is cut to a day, never kept for a year."""
    from services.poller.feed_fetch import FeedState
    from services.poller.service import asked_wait_left

    state = FeedState(wait_until=time.time() + 365 * 86400)
    assert 86390 < asked_wait_left(state) <= 86400
    assert asked_wait_left(FeedState()) == 0.0
    assert asked_wait_left(FeedState(wait_until=time.time() - 5)) == 0.0
