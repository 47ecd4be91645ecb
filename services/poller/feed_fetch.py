"""Fetching and parsing one feed: conditional GET, size cap, tolerant parsing."""

from __future__ import annotations

import calendar
import hashlib
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import feedparser
import httpx

from services.poller.metrics import ITEMS_DROPPED, feed_label
from shared.errors import ArchiverError
from shared.fetching import retry_after as retry_wait
from shared.links.urlparts import SUPPORTED_SCHEMES

log = logging.getLogger(__name__)

USABLE_HOST = re.compile(r"^[\w.-]+$")
"""A host name a link can have (letters of any script, digits, dots, hyphens)."""

DISCOURSE_GUID = re.compile(r"^(?P<prefix>.+)-post-(?P<id>\d+)$")


class FeedError(ArchiverError):
    """The feed could not be fetched or parsed (reason in the message); `wait_s`: how long
    the forum asked us to wait before asking again (its 429's or 503's Retry-After)."""

    def __init__(self, reason: str, message: str, wait_s: float | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.wait_s = wait_s


def status_error(resp: httpx.Response, url: str) -> FeedError:
    """The error of an HTTP error answer, with the wait it asks for (429, 503)."""
    code = resp.status_code
    wait = None
    if code in retry_wait.WAITING_STATUSES:
        wait = retry_wait.of_headers(resp.headers.multi_items())
    asks = f"; it asks to wait {wait:.0f} s" if wait is not None else ""
    return FeedError("http_status", f"HTTP {code} from {url}{asks}", wait)


@dataclass
class FeedItem:
    """One post as read from a feed."""

    guid: str
    post_url: str
    title: str | None
    author: str | None
    published_at: datetime | None
    updated_at: datetime | None
    content_html: str
    content_hash: str

    @property
    def discourse_id(self) -> int | None:
        """The Discourse post id encoded in the guid, if this is a Discourse feed."""
        m = DISCOURSE_GUID.match(self.guid)
        return int(m.group("id")) if m else None

    @property
    def topic_url(self) -> str | None:
        """The topic URL derived from a Discourse post link (/t/<slug>/<id>/...)."""
        parts = urlsplit(self.post_url)
        m = re.match(r"^(/t/[^/]+/\d+)", parts.path)
        return f"{parts.scheme}://{parts.netloc}{m.group(1)}" if m else None


@dataclass
class FeedState:
    """What the poller remembers about one feed between polls: its position and the forum's
    asked wait are kept durably (services/poller/position.py), the validators in memory."""

    etag: str | None = None
    last_modified: str | None = None
    last_guids: set[str] = field(default_factory=set)
    max_post_id: int | None = None
    body_sha256: str | None = None
    """Digest of the last body read in full: a server without validators (no ETag, no
    Last-Modified) that sends the same bytes again is not parsed again."""
    wait_until: float | None = None
    """Unix time before which the forum asked not to be asked again (its 429's or 503's
    Retry-After, at most a day: shared.fetching.retry_after); kept across restarts, so a
    poller started again does not ask a rate-limited forum at once."""


def body_digest(body: bytes) -> str:
    """sha256 of a feed body, for `FeedState.body_sha256`."""
    return hashlib.sha256(body).hexdigest()


def content_hash(html: str) -> str:
    """sha256 of the post HTML: a change means an edit."""
    return hashlib.sha256(html.encode("utf-8", "surrogatepass")).hexdigest()


async def fetch(
    client: httpx.AsyncClient, url: str, state: FeedState, max_bytes: int
) -> bytes | None:
    """GET the feed with If-None-Match / If-Modified-Since; None when not modified."""
    headers: dict[str, str] = {}
    if state.etag:
        headers["If-None-Match"] = state.etag
    if state.last_modified:
        headers["If-Modified-Since"] = state.last_modified
    with fetch_errors(url):
        async with client.stream("GET", url, headers=headers) as resp:
            if resp.status_code == 304:
                return None
            if resp.status_code >= 400:
                raise status_error(resp, url)
            declared = resp.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise FeedError("too_large", f"feed declares {declared} bytes > {max_bytes}")
            body = await read_capped(resp, max_bytes, "feed body")
            state.etag = resp.headers.get("etag")
            state.last_modified = resp.headers.get("last-modified")
            return body


@contextmanager
def fetch_errors(url: str) -> Iterator[None]:
    """httpx's timeouts and other failures of a request to `url` as FeedError."""
    try:
        yield
    except httpx.TimeoutException as exc:
        raise FeedError("timeout", f"timeout fetching {url}: {exc}") from exc
    except httpx.HTTPError as exc:
        raise FeedError("network", f"fetching {url} failed: {exc}") from exc


async def read_capped(resp: httpx.Response, max_bytes: int, what: str) -> bytes:
    """The response's body; FeedError ("too_large") once it passes max_bytes."""
    body = bytearray()
    async for chunk in resp.aiter_bytes():
        body.extend(chunk)
        if len(body) > max_bytes:
            raise FeedError("too_large", f"{what} exceeds {max_bytes} bytes")
    return bytes(body)


def _when(entry: Any, key: str) -> datetime | None:
    if key.removesuffix("_parsed") not in entry:
        return None  # (feedparser would fall back to another date, with a warning)
    parsed = entry.get(key)
    if not parsed:
        return None
    try:
        return datetime.fromtimestamp(calendar.timegm(parsed), UTC)
    except (TypeError, ValueError, OverflowError):
        return None


def _author(entry: Any) -> str | None:
    raw = (entry.get("author") or "").strip()
    if not raw:
        return None
    return raw.lstrip("@").split()[0] or None


def usable_link(entry: Any, feed_url: str) -> str | None:
    """The item's absolute http(s) link, or None when it has none worth storing: no link, a
    link that is only the guid and not a URL, another scheme, or the feed's own URL (what a
    cut-off item in a truncated download resolves to)."""
    raw = str(entry.get("link") or "").strip()
    if not raw:
        return None
    if entry.get("guidislink") and not entry.get("links") and "://" not in raw:
        return None  # feedparser copied a non-URL guid into link
    try:
        parts = urlsplit(urljoin(feed_url, raw))
        hostname = parts.hostname
    except ValueError:  # e.g. an unclosed IPv6 bracket
        return None
    if parts.scheme not in SUPPORTED_SCHEMES or not hostname:
        return None
    if not (USABLE_HOST.match(hostname) or hostname.count(":") >= 2):
        return None
    link = urlunsplit(parts)  # scheme in lower case
    if link.split("#", 1)[0] == feed_url.split("#", 1)[0]:
        return None
    return link


def parse(body: bytes, feed_url: str) -> list[FeedItem]:
    """Parse an RSS/Atom body into items; keeps every valid item of a partly broken feed.

    Raises FeedError for an empty body ("empty"), a body that is no feed ("not_a_feed") and
    a broken feed with no readable item ("malformed"). Items without a usable link are
    dropped, logged and counted in dla_poller_items_dropped_total, never published.
    """
    if not body.strip():
        raise FeedError("empty", f"empty feed body from {feed_url}")
    try:
        parsed = feedparser.parse(body, sanitize_html=False, resolve_relative_uris=False)
    except (ValueError, TypeError, LookupError) as exc:  # feedparser's own bugs on odd input
        raise FeedError("malformed", f"feed parser failed: {exc!r}"[:300]) from exc
    if not parsed.get("version") and not parsed.entries:
        why = parsed.get("bozo_exception")
        raise FeedError("not_a_feed", f"not a feed: {body[:60]!r} ({why!r})"[:300])
    if parsed.get("bozo") and not parsed.entries:
        raise FeedError("malformed", f"not a feed: {parsed.get('bozo_exception')!r}"[:300])
    if parsed.get("bozo"):
        log.warning("feed %s is malformed but readable: %s", feed_url, parsed.get("bozo_exception"))
    items: list[FeedItem] = []
    for entry in parsed.entries:
        link = usable_link(entry, feed_url)
        if link is None:
            ITEMS_DROPPED.labels(feed_label(feed_url), "no_link").inc()
            log.warning(
                "feed %s: item %r without a usable link dropped (link %r)",
                feed_url,
                str(entry.get("id") or "")[:200],
                str(entry.get("link") or "")[:200],
            )
            continue
        guid = str(entry.get("id") or "").strip() or link
        contents = entry.get("content") or []
        html = contents[0].get("value", "") if contents else entry.get("summary", "") or ""
        items.append(
            FeedItem(
                guid=guid,
                post_url=link,
                title=(entry.get("title") or None),
                author=_author(entry),
                published_at=_when(entry, "published_parsed"),
                updated_at=_when(entry, "updated_parsed"),
                content_html=html,
                content_hash=content_hash(html),
            )
        )
    return items
