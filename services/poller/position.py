"""The poller's position per feed, kept durably in a JetStream key-value bucket.

The poller owns no database: what it must remember across restarts (the newest Discourse
post id it published, and for other feeds the guids of its last poll) lives in the
``POLLER_POSITIONS`` bucket, one key per feed. It is saved after every poll whose posts
JetStream stored, so after a crash or an outage the next poll knows where it stopped and
fills the gap from ``/posts.json`` (bounded by BACKFILL_MAX_PAGES, recorded as a feed.gap).
It is saved too when the forum asks us to wait (a 429's Retry-After), so a restarted poller
keeps the wait rather than asking the forum at once.
"""

from __future__ import annotations

import json
import logging

import nats.errors
from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig
from nats.js.errors import BucketNotFoundError, KeyNotFoundError
from nats.js.kv import KeyValue

from services.poller.feed_fetch import FeedState
from shared.errors import BusError
from shared.feed_health import feed_key
from shared.subjects import POLLER_POSITIONS

log = logging.getLogger(__name__)

KEPT_GUIDS = 500
"""Guids of the last poll kept (feeds without post ids find gaps by guid overlap)."""


class PositionStore:
    """Load and save FeedState positions; create with ``await PositionStore.open(js, n)``."""

    def __init__(self, kv: KeyValue) -> None:
        self.kv = kv

    @classmethod
    async def open(cls, js: JetStreamContext, replicas: int = 1) -> PositionStore:
        """Bind to the bucket, creating it (history 1, `replicas` copies) if absent."""
        try:
            try:
                kv = await js.key_value(POLLER_POSITIONS)
            except BucketNotFoundError:
                kv = await js.create_key_value(
                    KeyValueConfig(bucket=POLLER_POSITIONS, history=1, replicas=replicas)
                )
        except (TimeoutError, nats.errors.Error) as exc:
            raise BusError(f"position bucket unavailable: {exc}") from exc
        return cls(kv)

    async def load(self, feed_url: str, state: FeedState) -> bool:
        """Fill state from the stored position; False when the feed has none yet."""
        try:
            entry = await self.kv.get(feed_key(feed_url))
        except KeyNotFoundError:
            return False
        except (TimeoutError, nats.errors.Error) as exc:
            raise BusError(f"cannot read the position of {feed_url}: {exc}") from exc
        try:
            data = json.loads(entry.value or b"{}")
            max_id = data.get("max_post_id")
            state.max_post_id = int(max_id) if max_id is not None else None
            state.last_guids = {str(g) for g in data.get("last_guids") or []}
            wait_until = data.get("wait_until")
            state.wait_until = float(wait_until) if wait_until is not None else None
        except (ValueError, TypeError, AttributeError) as exc:
            log.error("position of %s unreadable (%s); starting without one", feed_url, exc)
            return False
        return True

    async def save(self, feed_url: str, state: FeedState) -> None:
        """Store state's position (raises BusError when JetStream did not store it)."""
        value = {
            "feed_url": feed_url,
            "max_post_id": state.max_post_id,
            "last_guids": sorted(state.last_guids)[:KEPT_GUIDS],
            "wait_until": state.wait_until,
        }
        try:
            await self.kv.put(feed_key(feed_url), json.dumps(value).encode())
        except (TimeoutError, nats.errors.Error) as exc:
            raise BusError(f"cannot save the position of {feed_url}: {exc}") from exc

    async def check(self) -> dict[str, object]:
        """Health: ok when the bucket answers."""
        try:
            await self.kv.status()
        except (TimeoutError, nats.errors.Error) as exc:
            return {"ok": False, "positions": str(exc)[:200]}
        return {"ok": True, "positions": "ok"}
