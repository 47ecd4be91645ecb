"""The post: one shape for a post on every platform (X, Bluesky, TikTok, Instagram, YouTube,
Reddit, Facebook, Imgur, Streamable, Telegram, Mastodon).

A platform hook keeps it as `post.json` (artifact kind `post`) and prints it as a Post
record (shared.hooks.records.PostRecord); the writer stores it, indexes its text for search,
and the web shows it as the link's post card. Counts the platform did not give are absent,
never 0. Each image is downloaded by the hook (`file`: our copy, relative to the hook's
folder, uploaded as an artifact of kind `post_media`); a video is downloaded by the media
service (the link's media job), so its `file` stays empty and its poster image is our copy.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

MediaKind = Literal["image", "video", "gif", "audio"]
TEXT_LIMIT = 100_000
"""Characters kept of a post's text (a Reddit self post stops at 40 000, a YouTube
description at 5 000); a longer one is cut with an ellipsis."""


class _Shape(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Author(_Shape):
    """Who posted it."""

    name: str | None = None
    """Display name ("Ada Example")."""
    handle: str | None = None
    """Handle without the @ (X screen name, Bluesky handle, Reddit user name, channel handle)."""
    id: str | None = None
    """The platform's id of the account (X user id, Bluesky DID, YouTube channel id)."""
    url: str | None = None
    """The account's page."""


class Counts(_Shape):
    """Counts as of the capture; each is absent when the platform did not give it."""

    likes: int | None = Field(default=None, ge=0)
    """Likes, favourites, upvotes (Reddit's score)."""
    reposts: int | None = Field(default=None, ge=0)
    """Reposts, retweets, shares."""
    replies: int | None = Field(default=None, ge=0)
    """Replies, comments."""
    views: int | None = Field(default=None, ge=0)
    """Views, plays."""

    @field_validator("likes", "reposts", "replies", "views", mode="before")
    @classmethod
    def _count(cls, value: Any) -> int | None:
        """A count the platform sent as junk (negative, text, infinite) is unknown."""
        return count(value)


class PostMedia(_Shape):
    """One image, video, GIF or sound of the post."""

    kind: MediaKind
    url: str
    """Where the platform serves it (the full-size image, the video page or file)."""
    file: str | None = None
    """Our copy, relative to the hook's folder (`media/1.jpg`); None for a video (the
    media service keeps it) or when the download failed (`error`)."""
    poster: str | None = None
    """A video's poster image, as the platform serves it."""
    poster_file: str | None = None
    """Our copy of the poster."""
    alt: str | None = None
    """The description the author gave (alt text)."""
    width: int | None = None
    height: int | None = None
    duration_s: float | None = None
    content_type: str | None = None
    bytes: int | None = None
    sha256: str | None = None
    error: str | None = None
    """Why there is no copy of it (too large, 404, refused ...)."""

    @field_validator("width", "height", "bytes", mode="before")
    @classmethod
    def _size(cls, value: Any) -> int | None:
        """A size the platform sent as junk is unknown, not a reason to lose the post."""
        return count(value)

    @field_validator("duration_s", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> float | None:
        seconds = count(value)
        return None if seconds is None else float(value)


class Post(_Shape):
    """A post, with the post it replies to and the post it quotes as posts of this shape."""

    platform: str = Field(min_length=1, max_length=40)
    """x, bluesky, tiktok, instagram, youtube, reddit, facebook, imgur, streamable, telegram."""
    post_id: str = Field(min_length=1, max_length=500)
    """The platform's id of the post."""
    url: str
    """The post's address on the platform."""
    author: Author = Field(default_factory=Author)
    title: str | None = None
    """A title, where posts have one (YouTube, Reddit, Imgur)."""
    text: str = ""
    """The whole text, shortened links expanded; `[deleted]` / `[removed]` as the platform
    shows them."""
    created_at: str | None = None
    """When it was posted, ISO 8601 in UTC (`2024-05-01T12:00:00Z`)."""
    language: str | None = None
    """The language the platform names (BCP 47), when it does."""
    media: list[PostMedia] = Field(default_factory=list)
    counts: Counts = Field(default_factory=Counts)
    parent: Post | None = None
    """The post this one replies to."""
    quoted: Post | None = None
    """The post this one quotes (or reposts with a comment)."""
    replies: list[Post] = Field(default_factory=list)
    """Top replies, where the platform gives them (depth and number are settings)."""
    source: str = ""
    """The step of the chain that produced it (syndication, fxtwitter, appview, yt-dlp,
    oembed, embed, thread-json, browser)."""
    unavailable: str | None = None
    """Set when the platform shows this (nested) post only as unavailable: its own words
    ("This Post was deleted by the Post author", "not found", "blocked")."""

    @field_validator("text")
    @classmethod
    def _cut(cls, value: str) -> str:
        return value if len(value) <= TEXT_LIMIT else value[: TEXT_LIMIT - 1] + "…"

    @field_validator("created_at", mode="before")
    @classmethod
    def _iso(cls, value: Any) -> str | None:
        return iso_utc(value)

    def walk(self) -> list[Post]:
        """This post and every post nested in it (parent, quoted, replies), depth first."""
        found = [self]
        for inner in (self.parent, self.quoted, *self.replies):
            if inner is not None:
                found.extend(inner.walk())
        return found

    def search_text(self) -> str:
        """What search finds the link by: title, author and text of the post, then of the
        posts it quotes or replies to (a blank line between posts)."""
        parts = []
        for post in self.walk():
            who = " ".join(x for x in (post.author.name, post.author.handle) if x)
            body = "\n".join(x for x in (post.title, who, post.text) if x)
            if body:
                parts.append(body)
        return "\n\n".join(parts)

    def files(self) -> list[str]:
        """Every file of ours the post names (images, posters), nested posts included."""
        return [
            f
            for post in self.walk()
            for m in post.media
            for f in (m.file, m.poster_file)
            if f is not None
        ]

    def has_video(self) -> bool:
        """Whether it (or a post it quotes) shows a video: the link gets a media job."""
        return any(m.kind in ("video", "gif") for p in (self, self.quoted) if p for m in p.media)


_TWITTER_TIME = "%a %b %d %H:%M:%S %z %Y"
_DIGITS = re.compile(r"^\d{9,13}(\.\d+)?$")


def count(value: Any) -> int | None:
    """A count or a size as a platform's JSON gives it: a non-negative number (an int, a
    float, digits in a string) as an int; None for anything else (a bool is no count)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and math.isfinite(value) and value >= 0:
        return int(value)
    return int(value) if isinstance(value, str) and value.isdigit() else None


def iso_utc(value: Any) -> str | None:
    """A time as ISO 8601 in UTC with a Z: from epoch seconds (or milliseconds), an ISO
    string (any offset), or X's `Wed Oct 10 20:19:24 +0000 2018`. None when unreadable."""
    if value is None or value == "":
        return None
    when: datetime | None = None
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) or (isinstance(value, str) and _DIGITS.match(value)):
        seconds = float(value)
        if seconds > 10**11:  # milliseconds
            seconds /= 1000
        try:
            when = datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    elif isinstance(value, datetime):
        when = value
    elif isinstance(value, str):
        text = value.strip()
        try:
            when = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            try:
                when = datetime.strptime(text, _TWITTER_TIME)
            except ValueError:
                return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
