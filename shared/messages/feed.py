"""What the poller publishes on the FEED stream (`feed.*`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from shared.messages.base import Message


class LinkOccurrence(BaseModel):
    """One link found in one post, with every form of its URL. Whether it is archived the
    writer decides from its own settings (`shared.links.policy`)."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _drop_poller_verdict(cls, data: Any) -> Any:
        """Posts still in the FEED stream from a poller that sent its own archive verdict
        (`policy`, `policy_reason`) stay valid; the verdict is the writer's alone."""
        if isinstance(data, dict) and ("policy" in data or "policy_reason" in data):
            return {k: v for k, v in data.items() if k not in ("policy", "policy_reason")}
        return data

    original_url: str
    """The href as written in the post (resolved against the post URL if relative)."""
    normalized_url: str
    """Tracking parameters stripped, host lower-cased, default port and fragment dropped."""
    canonical_url: str
    """Site rules applied (reddit -> old.reddit.com, youtu.be -> watch URL, ...)."""
    domain: str
    """Host of the canonical URL."""
    in_quote: bool = False
    """True when the link sits inside a quote (blockquote, aside.quote, [quote])."""
    context_snippet: str = ""
    """Short excerpt of the text around the link."""
    needs_resolve: bool = False
    """True for short links (redd.it, /s/ share links) still to be resolved by a redirect."""
    final_url: str | None = None
    """Where the short link redirected to, when the poller resolved it."""


class FeedPost(Message):
    """``feed.post``: a post seen in a feed, with the links extracted from it."""

    feed_url: str
    """The feed this post came from."""
    guid: str
    """The item's guid (stable id of the post)."""
    post_url: str
    """Link to the post."""
    topic_url: str | None = None
    """Link to the topic, when derivable."""
    title: str | None = None
    """Item title (the topic title on Discourse)."""
    author: str | None = None
    """Author username."""
    published_at: datetime | None = None
    """When the post was published."""
    updated_at: datetime | None = None
    """When the feed says it was last updated."""
    content_html: str
    """The cooked HTML of the post."""
    content_hash: str
    """sha256 of content_html; a change means an edit."""
    links: list[LinkOccurrence] = Field(default_factory=list)
    """Every link occurrence found in the post, in document order."""
    seen_at: datetime
    """When the poller saw it."""

    def msg_id(self) -> str:
        return f"post:{self.guid}:{self.content_hash}"


class FeedGap(Message):
    """``feed.gap``: a poll shared no post with the previous one; a backfill was attempted."""

    feed_url: str
    """The feed."""
    detected_at: datetime
    """When the gap was seen."""
    backfilled_posts: int
    """How many missed posts were fetched."""
    closed: bool
    """True if the backfill reached a post seen before."""

    def msg_id(self) -> str:
        return f"gap:{self.feed_url}:{self.detected_at.isoformat()}"


class BackfillRequest(BaseModel):
    """``poller.backfill`` (NATS request/reply, in no stream): read a whole topic now."""

    model_config = ConfigDict(extra="forbid")

    topic_url: str
    """The topic as the person pasted it (``shared.discourse.parse_topic_url``)."""


class BackfillReport(BaseModel):
    """The poller's answer to a BackfillRequest: what it read and published, or why not."""

    model_config = ConfigDict(extra="forbid")

    topic_url: str
    """The topic as asked."""
    forum: str = ""
    """The forum it is on (``shared.discourse.forum_of``)."""
    posts: int = 0
    """Posts read and published on ``feed.post``."""
    links: int = 0
    """Link occurrences found in them."""
    quoted: int = 0
    """Of which inside quotes."""
    error: str | None = None
    """Why nothing was published (None: done)."""
    reason: str | None = None
    """The error's kind: not_a_topic, not_watched, not_found, private, malformed,
    http_status, network, timeout, too_large, unavailable (JetStream), invalid (the
    request itself)."""
