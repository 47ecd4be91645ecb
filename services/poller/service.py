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
from collections import OrderedDict
from datetime import UTC, datetime
from urllib.parse import urlsplit

import httpx

from services.poller import metrics
from services.poller.backfill import backfill
from services.poller.feed_fetch import (
    FeedError,
    FeedItem,
    FeedState,
    body_digest,
    content_hash,
    fetch,
    parse,
)
from services.poller.metrics import GAPS, LAST_OK, LINKS, POLL_SECONDS, POLLS, POSTS, feed_label
from services.poller.position import PositionStore
from services.poller.resolve import Resolver
from services.poller.settings import PollerSettings
from shared import bus
from shared.errors import BusError
from shared.lifecycle import Service, ServiceContext
from shared.links import occurrences_for_post
from shared.links.urlparts import scrub_credentials
from shared.messages import FeedGap, FeedPost
from shared.observability import HealthCheck
from shared.subjects import FEED_GAP, FEED_POST

log = logging.getLogger(__name__)


SEEN_CAPACITY = 100_000


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
            if self.published.get(item.guid) == item.content_hash:
                continue
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
        self.loaded.add(feed_url)

    async def save_position(self, feed_url: str, state: FeedState) -> None:
        """Store the position (a failure is logged and counted; the next poll saves again)."""
        if self.positions is None:
            return
        try:
            await self.positions.save(feed_url, state)
        except BusError as exc:
            log.warning("%s: position not saved, will retry next poll: %s", feed_url, exc)
            POLLS.labels(feed_label(feed_url), "position_not_saved").inc()

    async def poll(self, client: httpx.AsyncClient, feed_url: str) -> None:
        """One poll of one feed; every failure is logged and counted, never raised."""
        state = self.states[feed_url]
        with POLL_SECONDS.labels(feed_label(feed_url)).time():
            try:
                await self.load_position(feed_url)
            except BusError as exc:
                log.warning("poll of %s skipped: its position cannot be read: %s", feed_url, exc)
                POLLS.labels(feed_label(feed_url), "position_unavailable").inc()
                return
            try:
                body = await fetch(client, feed_url, state, self.settings.feed_max_bytes)
                digest = None if body is None else body_digest(body)
                if body is None or digest == state.body_sha256:
                    POLLS.labels(feed_label(feed_url), "not_modified").inc()
                    return
                items = parse(body, feed_url)
                if has_gap(state, items):
                    await self.fill_gap(client, feed_url, items, state)
                await self.publish_items(client, feed_url, items)
            except FeedError as exc:
                log.warning("poll of %s failed (%s): %s", feed_url, exc.reason, exc)
                POLLS.labels(feed_label(feed_url), exc.reason).inc()
                return
            except BusError as exc:
                log.warning(
                    "poll of %s: could not publish, will retry next poll: %s", feed_url, exc
                )
                POLLS.labels(feed_label(feed_url), "publish_failed").inc()
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
        POLLS.labels(feed_label(feed_url), "ok").inc()
        LAST_OK.labels(feed_label(feed_url)).set_to_current_time()
        log.info("polled %s: %d items", feed_url, len(items))

    async def fill_gap(
        self, client: httpx.AsyncClient, feed_url: str, items: list[FeedItem], state: FeedState
    ) -> None:
        """Fetch and publish the posts missed between two polls, and record the gap."""
        GAPS.labels(feed_label(feed_url)).inc()
        try:
            missed, closed = await backfill(
                client, feed_url, items, state, self.settings.backfill_max_pages
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
            while not self.ctx.stop.is_set():
                await asyncio.gather(*(self.poll(c, url) for url in self.settings.feeds))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(
                        self.ctx.stop.wait(), timeout=self.settings.poll_interval_seconds
                    )
            if self._resolver is not None:
                await self._resolver.aclose()


async def body(ctx: ServiceContext[PollerSettings]) -> None:
    """Service body."""
    ctx.add_check(positions_check(ctx))
    await Poller(ctx, ctx.settings).run()


def positions_check(ctx: ServiceContext[PollerSettings]) -> HealthCheck:
    """/healthz: the position bucket answers (besides NATS being connected)."""

    async def check() -> dict[str, object]:
        try:
            store = await PositionStore.open(ctx.js, ctx.settings.nats_replicas)
        except BusError as exc:
            return {"ok": False, "positions": str(exc)[:200]}
        return await store.check()

    return check


SERVICE = Service("poller", PollerSettings, body)


def run() -> None:
    """Process entry point."""
    SERVICE.main()
