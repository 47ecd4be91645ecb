"""The poller loop: every POLL_INTERVAL_SECONDS, each feed is fetched, parsed, and each new or
edited post is published on `feed.post` with its quote-aware, canonical links (short links
resolved); whether each is archived the writer decides.

Its position per feed (newest post id published) survives restarts in a JetStream key-value
bucket (services.poller.position); a poll whose posts all lie beyond that position first
fills the gap from `/posts.json` (bounded, recorded as a feed.gap)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from datetime import UTC, datetime
from urllib.parse import urlsplit

import httpx
import nats.errors
from nats.aio.msg import Msg
from nats.js.kv import KeyValue
from pydantic import ValidationError

from services.poller import metrics
from services.poller.backfill import backfill, read_topic
from services.poller.feed_fetch import (
    DISCOURSE_GUID,
    FeedError,
    FeedItem,
    FeedState,
    body_digest,
    content_hash,
    fetch,
    parse,
)
from services.poller.feed_health import FeedHealth
from services.poller.metrics import (
    FAILING_SINCE,
    GAPS,
    LAST_OK,
    LINKS,
    POLL_SECONDS,
    POLLS,
    POSTS,
    feed_label,
)
from services.poller.position import PositionStore
from services.poller.resolve import Resolver
from services.poller.settings import PollerSettings
from shared import bus, feed_health
from shared.discourse import NotATopic, TopicRef, forum_of, parse_topic_url
from shared.errors import BusError
from shared.fetching import retry_after as retry_wait
from shared.lifecycle import Service, ServiceContext
from shared.links.occurrences import occurrences_for_post
from shared.links.urlparts import scrub_credentials
from shared.logs import redact
from shared.messages import BackfillReport, BackfillRequest, FeedGap, FeedPost
from shared.observability import HealthCheck
from shared.setting_names import StartReport
from shared.subjects import FEED_GAP, FEED_POST, POLLER_BACKFILL, POLLER_QUEUE

log = logging.getLogger(__name__)


SEEN_CAPACITY = 100_000


def guid_prefix(state: FeedState, topic: TopicRef) -> str:
    """The guid prefix posts of this forum have in its posts.rss (`<prefix>-post-<id>`), as
    the feed's last poll showed it; Discourse's own, the forum's host name, before any poll."""
    for guid in state.last_guids:
        if m := DISCOURSE_GUID.match(guid):
            return m.group("prefix")
    return urlsplit(topic.base).hostname or topic.forum


def asked_wait_left(state: FeedState) -> float:
    """Seconds left of the wait the forum asked for (0: none). A stored wait further off than
    the longest we keep (the clock was set back since it was asked) is cut to that."""
    if state.wait_until is None:
        return 0.0
    now = time.time()
    state.wait_until = min(state.wait_until, now + retry_wait.MAX_WAIT.total_seconds())
    return max(state.wait_until - now, 0.0)


def export_failing_since(feed_url: str, since: datetime | None) -> None:
    """The gauge of since when the feed fails: set while it fails, gone while it answers (a
    feed that never answered has no last-success series for the alert to read)."""
    label = feed_label(feed_url)
    if since is not None:
        FAILING_SINCE.labels(label).set(since.timestamp())
    else:
        with contextlib.suppress(KeyError):
            FAILING_SINCE.remove(label)


def has_gap(state: FeedState, items: list[FeedItem]) -> bool:
    """True when posts may be missing between the stored position and this poll: every
    Discourse post id is past the next one expected, or (other feeds) no guid is shared
    with the previous poll."""
    ids = [i.discourse_id for i in items if i.discourse_id is not None]
    if ids and state.max_post_id is not None:
        return min(ids) > state.max_post_id + 1
    guids = {i.guid for i in items}
    return bool(state.last_guids and guids and not guids & state.last_guids)


class Poller:
    """Polls every configured feed and publishes posts; positions are kept in JetStream KV."""

    def __init__(self, ctx: ServiceContext[PollerSettings], settings: PollerSettings) -> None:
        self.ctx = ctx
        self.settings = settings
        self.states = {url: FeedState() for url in settings.feeds}
        self.health = {url: FeedHealth() for url in settings.feeds}
        self.health_kv: KeyValue | None = None
        self.health_saved = True
        self.published: OrderedDict[str, str] = OrderedDict()
        self._resolver: Resolver | None = None
        self.positions: PositionStore | None = None
        self.loaded: set[str] = set()

    def resolver_for(self, client: httpx.AsyncClient) -> Resolver:
        """The short-link resolver using this HTTP client (its cache lives as long)."""
        if self._resolver is None or self._resolver.client is not client:
            self._resolver = Resolver(client, allow_private=self.settings.allow_private_targets)
        return self._resolver

    async def to_message(
        self, client: httpx.AsyncClient, feed_url: str, item: FeedItem
    ) -> FeedPost:
        """Build the feed.post message of an item: its links extracted, short links resolved."""
        forum = urlsplit(item.post_url).hostname or urlsplit(feed_url).hostname or ""
        # credentials someone pasted into a URL never leave the poller: not in the stored
        # post, its title, nor the snippets of its link occurrences
        html = scrub_credentials(item.content_html)
        try:
            links = occurrences_for_post(html, item.post_url, forum_hosts=[forum])
        except Exception:  # extraction must never cost us the post itself
            log.exception("link extraction failed for %s; publishing without links", item.guid)
            links = []
        links = await self.resolver_for(client).resolve_all(links)
        return FeedPost(
            feed_url=feed_url,
            guid=item.guid,
            post_url=item.post_url,
            topic_url=item.topic_url,
            title=scrub_credentials(item.title) if item.title else item.title,
            author=item.author,
            published_at=item.published_at,
            updated_at=item.updated_at,
            content_html=html,
            content_hash=content_hash(html),
            links=links,
            seen_at=datetime.now(UTC),
        )

    async def publish_items(
        self, client: httpx.AsyncClient, feed_url: str, items: list[FeedItem]
    ) -> None:
        """Publish items not published before with the same content hash (oldest first)."""
        for item in sorted(items, key=lambda i: i.published_at or datetime.min.replace(tzinfo=UTC)):
            if self.published.get(item.guid) != item.content_hash:
                await self.publish_item(client, feed_url, item)

    async def publish_item(
        self, client: httpx.AsyncClient, feed_url: str, item: FeedItem
    ) -> FeedPost:
        """Publish one item on feed.post (raises BusError when JetStream did not store it)."""
        message = await self.to_message(client, feed_url, item)
        await bus.publish(self.ctx.js, FEED_POST, message)
        self.published[item.guid] = item.content_hash
        self.published.move_to_end(item.guid)
        while len(self.published) > SEEN_CAPACITY:
            self.published.popitem(last=False)
        feed = feed_label(feed_url)
        POSTS.labels(feed).inc()
        quoted = sum(1 for link in message.links if link.in_quote)
        LINKS.labels(feed, "true").inc(quoted)
        LINKS.labels(feed, "false").inc(len(message.links) - quoted)
        return message

    async def backfill_topic(self, client: httpx.AsyncClient, topic_url: str) -> BackfillReport:
        """Read a whole topic of a watched forum and publish every post of it on feed.post,
        as polls do (the writer's idempotent apply makes a second run add nothing). Only
        the forums of FEEDS are read: a topic elsewhere is refused, never fetched."""
        report = BackfillReport(topic_url=topic_url)
        try:
            topic = parse_topic_url(topic_url)
        except NotATopic as exc:
            return report.model_copy(update={"error": str(exc), "reason": "not_a_topic"})
        report.forum = topic.forum
        feed_url = next((f for f in self.settings.feeds if forum_of(f) == topic.forum), None)
        if feed_url is None:
            watched = ", ".join(sorted({forum_of(f) for f in self.settings.feeds}))
            error = f"{topic.forum} is not a forum this archive watches (FEEDS: {watched})"
            return report.model_copy(update={"error": error, "reason": "not_watched"})
        try:
            await self.load_position(feed_url)
            prefix = guid_prefix(self.states[feed_url], topic)
            items = await read_topic(client, topic, prefix, self.settings.feed_max_bytes)
            for item in items:
                message = await self.publish_item(client, feed_url, item)
                report.posts += 1
                report.links += len(message.links)
                report.quoted += sum(1 for link in message.links if link.in_quote)
        except FeedError as exc:
            return report.model_copy(update={"error": str(exc), "reason": exc.reason})
        except BusError as exc:
            error = f"JetStream unavailable ({report.posts} of the topic's posts stored): {exc}"
            return report.model_copy(update={"error": error, "reason": "unavailable"})
        log.info("backfilled topic %s: %d posts, %d links", topic.url, report.posts, report.links)
        return report

    async def answer_backfill(self, client: httpx.AsyncClient, msg: Msg) -> None:
        """Answer one poller.backfill request with its report."""
        try:
            asked = BackfillRequest.model_validate_json(msg.data)
        except ValidationError as exc:
            error = f"bad request: {exc}"[:300]
            report = BackfillReport(topic_url="", error=error, reason="invalid")
        else:
            report = await self.backfill_topic(client, asked.topic_url)
        if report.error:
            log.warning("backfill of %r refused: %s", report.topic_url, report.error)
        with contextlib.suppress(nats.errors.Error):
            await msg.respond(report.model_dump_json().encode())

    async def load_position(self, feed_url: str) -> None:
        """Read the feed's stored position once (raises BusError while JetStream is away)."""
        if feed_url in self.loaded:
            return
        if self.positions is None:
            self.positions = await PositionStore.open(self.ctx.js, self.settings.nats_replicas)
        state = self.states[feed_url]
        if await self.positions.load(feed_url, state):
            log.info("%s: resuming after post id %s", feed_url, state.max_post_id)
        else:
            log.info("%s: no stored position; starting from the current feed", feed_url)
        await self.resume_health(feed_url)
        self.loaded.add(feed_url)

    async def resume_health(self, feed_url: str) -> None:
        """Take up the feed's health as the last poller stored it, and its last answer's time
        for the alert on a feed that stopped answering (a restart would otherwise clear it:
        the alert resolved while the feed still fails). Raises BusError like the position."""
        if self.health_kv is None:
            self.health_kv = await feed_health.bucket(self.ctx.js, self.settings.nats_replicas)
        stored = await feed_health.read(self.health_kv, feed_url)
        if stored is None or self.health[feed_url].polled_at is not None:
            return
        self.health[feed_url].resume(stored)
        if stored.last_success is not None:
            LAST_OK.labels(feed_label(feed_url)).set(stored.last_success.timestamp())
        export_failing_since(feed_url, stored.failing_since)

    async def save_position(self, feed_url: str, state: FeedState) -> None:
        """Store the position (a failure is logged and counted; the next poll saves again)."""
        if self.positions is None:
            return
        try:
            await self.positions.save(feed_url, state)
        except BusError as exc:
            log.warning("%s: position not saved, will retry next poll: %s", feed_url, exc)
            POLLS.labels(feed_label(feed_url), "position_not_saved").inc()

    def outcome(self, feed_url: str, outcome: str, message: str = "") -> None:
        """Count a poll's outcome and keep the feed's health (`ok` and `not_modified`: the
        feed answered; anything else: a failure, with `message`)."""
        POLLS.labels(feed_label(feed_url), outcome).inc()
        now = datetime.now(UTC)
        if outcome in ("ok", "not_modified"):
            self.health[feed_url].succeeded(now)
            LAST_OK.labels(feed_label(feed_url)).set(now.timestamp())
        else:
            self.health[feed_url].failed(outcome, message, now)
        export_failing_since(feed_url, self.health[feed_url].failing_since)

    async def poll(self, client: httpx.AsyncClient, feed_url: str) -> None:
        """One poll of one feed, then its health stored for the owner; every failure is
        logged and counted, never raised."""
        try:
            await self._poll(client, feed_url)
        finally:
            await self.save_health(feed_url)

    async def save_health(self, feed_url: str) -> None:
        """Store the feed's health report (shared.feed_health); a failure is logged once
        until a save works again (the next poll saves again)."""
        report = self.health[feed_url].report(feed_url, self.states[feed_url].wait_until)
        if report is None:
            return
        try:
            if self.health_kv is None:
                self.health_kv = await feed_health.bucket(self.ctx.js, self.settings.nats_replicas)
            await feed_health.save(self.health_kv, feed_url, report)
        except BusError as exc:
            if self.health_saved:
                log.warning("%s: feed health not stored, will retry next poll: %s", feed_url, exc)
            self.health_saved = False
        else:
            self.health_saved = True

    async def _poll(self, client: httpx.AsyncClient, feed_url: str) -> None:
        state = self.states[feed_url]
        try:
            await self.load_position(feed_url)
        except BusError as exc:
            log.warning("poll of %s skipped: its position cannot be read: %s", feed_url, exc)
            self.outcome(feed_url, "position_unavailable", str(exc))
            return
        left = asked_wait_left(state)
        if left > 0:  # the forum asked us to wait: its health says so, and until when
            log.debug("poll of %s skipped: the forum asked to wait %.0f s more", feed_url, left)
            return
        with POLL_SECONDS.labels(feed_label(feed_url)).time():
            try:
                body = await fetch(client, feed_url, state, self.settings.feed_max_bytes)
                digest = None if body is None else body_digest(body)
                if body is None or digest == state.body_sha256:
                    self.outcome(feed_url, "not_modified")
                    return
                items = parse(body, feed_url)
                if has_gap(state, items):
                    await self.fill_gap(client, feed_url, items, state)
                await self.publish_items(client, feed_url, items)
            except FeedError as exc:
                log.warning("poll of %s failed (%s): %s", feed_url, exc.reason, exc)
                self.outcome(feed_url, exc.reason, str(exc))
                if exc.wait_s is not None:
                    wait = retry_wait.bounded(exc.wait_s).total_seconds()
                    state.wait_until = time.time() + wait
                    await self.save_position(feed_url, state)
                return
            except BusError as exc:
                log.warning(
                    "poll of %s: could not publish, will retry next poll: %s", feed_url, exc
                )
                self.outcome(feed_url, "publish_failed", str(exc))
                state.etag = state.last_modified = state.body_sha256 = None
                return
        state.body_sha256 = digest
        before = (state.max_post_id, state.last_guids)
        state.last_guids = {i.guid for i in items}
        ids = [i.discourse_id for i in items if i.discourse_id is not None]
        if ids:
            state.max_post_id = max([*ids, state.max_post_id or 0])
        if (state.max_post_id, state.last_guids) != before:
            await self.save_position(feed_url, state)
        state.wait_until = None
        self.outcome(feed_url, "ok")
        log.info("polled %s: %d items", feed_url, len(items))

    async def fill_gap(
        self, client: httpx.AsyncClient, feed_url: str, items: list[FeedItem], state: FeedState
    ) -> None:
        """Fetch and publish the posts missed between two polls, and record the gap."""
        GAPS.labels(feed_label(feed_url)).inc()
        try:
            missed, closed = await backfill(
                client,
                feed_url,
                items,
                state,
                self.settings.backfill_max_pages,
                self.settings.feed_max_bytes,
            )
        except FeedError as exc:
            log.warning("gap in %s not filled: %s", feed_url, exc)
            missed, closed = [], False
        await self.publish_items(client, feed_url, missed)
        gap = FeedGap(
            feed_url=feed_url,
            detected_at=datetime.now(UTC),
            backfilled_posts=len(missed),
            closed=closed,
        )
        await bus.publish(self.ctx.js, FEED_GAP, gap)
        log.warning("gap in %s: backfilled %d posts (closed=%s)", feed_url, len(missed), closed)

    async def run(self) -> None:
        """Poll every feed every interval until stopped."""
        for url in self.settings.feeds:
            metrics.initialise(url)
        timeout = httpx.Timeout(self.settings.feed_timeout_seconds)
        headers = {"User-Agent": self.settings.user_agent}
        async with httpx.AsyncClient(timeout=timeout, headers=headers, follow_redirects=True) as c:

            async def answer(msg: Msg) -> None:
                await self.answer_backfill(c, msg)

            requests = await self.ctx.nc.subscribe(POLLER_BACKFILL, POLLER_QUEUE, cb=answer)
            while not self.ctx.stop.is_set():
                await asyncio.gather(*(self.poll(c, url) for url in self.settings.feeds))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(
                        self.ctx.stop.wait(), timeout=self.settings.poll_interval_seconds
                    )
            with contextlib.suppress(nats.errors.Error):
                await requests.unsubscribe()
            if self._resolver is not None:
                await self._resolver.aclose()


async def body(ctx: ServiceContext[PollerSettings]) -> None:
    """Service body."""
    poller = Poller(ctx, ctx.settings)
    ctx.add_check(positions_check(ctx))
    ctx.add_check(feeds_check(poller))
    await poller.run()


def feeds_check(poller: Poller) -> HealthCheck:
    """/healthz `feeds`: each feed's health (services/poller/feed_health.py). A failing feed
    does not make the poller unhealthy: restarting it would not mend the forum."""

    async def check() -> dict[str, object]:
        feeds: dict[str, object] = {}
        for url, health in poller.health.items():
            report = health.report(url, poller.states[url].wait_until)
            feeds[redact(url)] = (
                {"ok": True, "polled_at": None}
                if report is None
                else report.model_dump(mode="json", exclude={"feed"})
            )
        return {"feeds": feeds}

    return check


def positions_check(ctx: ServiceContext[PollerSettings]) -> HealthCheck:
    """/healthz: the position bucket answers (besides NATS being connected)."""

    async def check() -> dict[str, object]:
        try:
            store = await PositionStore.open(ctx.js, ctx.settings.nats_replicas)
        except BusError as exc:
            return {"ok": False, "positions": str(exc)[:200]}
        return await store.check()

    return check


SERVICE = Service(
    "poller",
    PollerSettings,
    body,
    more_setting_problems=lambda s: StartReport(idle=s.idle()),
)


def run() -> None:
    """Process entry point."""
    SERVICE.main()
