"""The poller's metrics. The `feed` label is the feed's host and path (bounded by configuration)."""

from __future__ import annotations

from urllib.parse import urlsplit

from prometheus_client import Counter, Gauge, Histogram

POLLS = Counter("dla_poller_polls_total", "Feed polls by outcome", ["feed", "outcome"])
POSTS = Counter("dla_poller_posts_total", "Posts published (new or edited)", ["feed"])
LINKS = Counter(
    "dla_poller_links_total", "Link occurrences published, by quote context", ["feed", "in_quote"]
)
GAPS = Counter(
    "dla_poller_feed_gaps_total", "Polls that shared no post with the previous one", ["feed"]
)
POLL_SECONDS = Histogram("dla_poller_poll_duration_seconds", "Time of one poll", ["feed"])
LAST_OK = Gauge(
    "dla_poller_last_success_timestamp_seconds",
    "Unix time of the last poll the feed answered (new posts or none)",
    ["feed"],
)
FAILING_SINCE = Gauge(
    "dla_poller_failing_since_timestamp_seconds",
    "Unix time the feed began failing (its polls since then all failed); no series while it"
    " answers. `NoSuccessfulPoll` reads it for a feed that has never answered",
    ["feed"],
)
ITEMS_DROPPED = Counter(
    "dla_poller_items_dropped_total", "Feed items dropped, never published", ["feed", "reason"]
)
SHORT_LINKS = Counter(
    "dla_poller_short_links_total", "Short links resolved by the poller", ["outcome"]
)


def feed_label(feed_url: str) -> str:
    """The bounded label of a feed: its host and path (`forum.example/posts.rss`), never its
    credentials or query. The host alone made two feeds of one forum one series, so that
    `NoSuccessfulPoll` could not see one of them fail while the other worked."""
    parts = urlsplit(feed_url)
    host = parts.hostname or "unknown"
    path = parts.path.rstrip("/")
    return host + path


def initialise(feed_url: str) -> None:
    """Export a feed's series at zero before its first poll, so dashboards see them."""
    feed = feed_label(feed_url)
    for outcome in ("ok", "not_modified"):
        POLLS.labels(feed, outcome)
    POSTS.labels(feed)
    for in_quote in ("true", "false"):
        LINKS.labels(feed, in_quote)
    GAPS.labels(feed)
    for outcome in ("ok", "failed"):
        SHORT_LINKS.labels(outcome)
