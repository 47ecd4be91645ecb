"""Each watched feed's health, from the poller to the owner: when it last answered, since when
and why it fails. The poller writes a feed's `FeedHealthReport` after every poll into the
`FEED_HEALTH` key-value bucket (one key a feed); the web reads them for the console's queue
page and `/admin/queue.json` (`dla status`). A key-value bucket and not the database: the
report is the poller's present state, not history, and every service that must show it
already talks to NATS. A feed no poller reads any more drops out after `MAX_AGE_S`."""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime

import nats.errors
from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig
from nats.js.errors import BucketNotFoundError, KeyNotFoundError
from nats.js.kv import KeyValue
from pydantic import BaseModel, ValidationError

from shared.errors import BusError
from shared.subjects import FEED_HEALTH

log = logging.getLogger(__name__)

MAX_AGE_S = 86400.0
"""A report not written again within this long is dropped (its feed is no longer watched)."""


def feed_key(feed_url: str) -> str:
    """A feed's key in the poller's buckets (keys allow only a few characters: a hash)."""
    return "feed." + hashlib.sha256(feed_url.encode()).hexdigest()[:40]


class FeedHealthReport(BaseModel):
    """One feed's health after a poll."""

    feed: str
    """The feed's URL as shown to people (a password in it masked, as in the logs)."""
    ok: bool
    """False while the feed fails (since `failing_since`)."""
    polled_at: datetime
    """When the poll this report follows ended."""
    last_success: datetime | None = None
    """When the feed last answered with a feed (new posts or none)."""
    failing_since: datetime | None = None
    """The first failed poll since the last success (None: not failing)."""
    failures: int = 0
    """Failed polls since the last success."""
    error: str | None = None
    """The last failure: its reason and message."""
    wait_until: datetime | None = None
    """The forum asked not to be asked again before this (its 429's or 503's Retry-After):
    the feed is not polled until then (None: no wait asked)."""


async def bucket(js: JetStreamContext, replicas: int = 1) -> KeyValue:
    """The bucket, created (history 1, `replicas` copies, entries kept `MAX_AGE_S`) if absent;
    BusError while JetStream is unavailable."""
    try:
        try:
            return await js.key_value(FEED_HEALTH)
        except BucketNotFoundError:
            config = KeyValueConfig(bucket=FEED_HEALTH, history=1, ttl=MAX_AGE_S, replicas=replicas)
            return await js.create_key_value(config)
    except (TimeoutError, nats.errors.Error) as exc:
        raise BusError(f"feed health bucket unavailable: {exc}") from exc


async def save(kv: KeyValue, feed_url: str, report: FeedHealthReport) -> None:
    """Store a feed's report under its key (BusError when JetStream did not take it)."""
    try:
        await kv.put(feed_key(feed_url), report.model_dump_json().encode())
    except (TimeoutError, nats.errors.Error) as exc:
        raise BusError(f"feed health of {report.feed} not saved: {exc}") from exc


async def read(kv: KeyValue, feed_url: str) -> FeedHealthReport | None:
    """The feed's stored report (what a poller started again resumes from); None when there
    is none or it cannot be read (logged). BusError while JetStream is unavailable."""
    try:
        entry = await kv.get(feed_key(feed_url))
        return FeedHealthReport.model_validate_json(entry.value or b"")
    except KeyNotFoundError:
        return None
    except ValidationError as exc:
        log.warning("feed health of %s unreadable, not resumed: %s", feed_url, exc)
        return None
    except (TimeoutError, nats.errors.Error) as exc:
        raise BusError(f"feed health unreadable: {exc}") from exc


async def read_all(js: JetStreamContext) -> list[FeedHealthReport]:
    """Every feed's latest report, failing feeds first, then by URL; none when no poller has
    written one yet. BusError while JetStream is unavailable."""
    try:
        kv = await js.key_value(FEED_HEALTH)
    except BucketNotFoundError:
        return []
    except (TimeoutError, nats.errors.Error) as exc:
        raise BusError(f"feed health bucket unavailable: {exc}") from exc
    reports = []
    prefix = f"$KV.{FEED_HEALTH}."
    try:
        # the stream's subjects, one a key: a direct answer (KeyValue.keys() watches the bucket
        # and, under load, could report no key at all)
        info = await js.stream_info(f"KV_{FEED_HEALTH}", subjects_filter=prefix + ">")
    except (TimeoutError, nats.errors.Error) as exc:
        raise BusError(f"feed health unreadable: {exc}") from exc
    keys = sorted(s.removeprefix(prefix) for s in (info.state.subjects or {}))
    for key in keys:
        try:
            entry = await kv.get(key)
            reports.append(FeedHealthReport.model_validate_json(entry.value or b""))
        except KeyNotFoundError:
            continue  # dropped (aged out) between the listing and the read
        except ValidationError as exc:
            log.warning("feed health %s unreadable, skipped: %s", key, exc)
        except (TimeoutError, nats.errors.Error) as exc:
            raise BusError(f"feed health unreadable: {exc}") from exc
    return sorted(reports, key=lambda r: (r.ok, r.feed))
