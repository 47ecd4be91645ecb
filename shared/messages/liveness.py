"""Liveness checks of archived originals (`job.check`, `check.result`)."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from shared.messages.base import Message
from shared.platforms.outcome import Answer


class LivenessCheck(Message):
    """``job.check``: look at an archived link's original once more (a liveness check).

    A check is light: the platform's API steps where the link is a platform's post, else a
    conditional GET answered from the newest capture's response headers (`headers_key`);
    what it fetched is compared with the newest capture (the raw body's sha256, then the
    canonical text of both bodies; a post's text by its sha256)."""

    link_id: int
    """links.id."""
    seq: int = Field(ge=1)
    """The link's check number (a check dispatched again after its deadline gets the next)."""
    url: str
    """The URL to check (canonical form)."""
    snapshot_id: str | None = None
    """The newest capture compared against (None: never captured; nothing to compare)."""
    headers_key: str | None = None
    """S3 key of that capture's response headers (`headers.json` of the raw fetch)."""
    raw_key: str | None = None
    """S3 key of that capture's raw body (kind `raw_response`)."""
    raw_sha256: str | None = None
    """sha256 of that raw body."""
    post_sha256: str | None = None
    """sha256 of the stored post's text (`shared.liveness.compare.post_digest`)."""
    deadline: datetime
    """After this the writer considers the check lost and dispatches it again."""

    def msg_id(self) -> str:
        return f"check:{self.link_id}:{self.seq}"


class LivenessResult(Message):
    """``check.result``: what one liveness check found, with its evidence."""

    link_id: int
    """The link."""
    seq: int = Field(ge=1)
    """The check's number (LivenessCheck.seq)."""
    checked_at: datetime
    """When the original answered (the observation's time)."""
    answer: Answer
    """present, gone (only on positive evidence) or unknown."""
    tombstone: bool = False
    """A `gone` from the platform's own words (not a bare HTTP 404/410)."""
    status: int | None = None
    """The HTTP status of the deciding answer, when one arrived."""
    via: str = Field(max_length=60)
    """How it was asked: `http` (a conditional GET) or `<platform>:<step>`."""
    reason: str = Field(max_length=40)
    """A short word: ok, not_modified, not_found, removed, deleted, suspended, private,
    rate_limited, http_5xx, login_wall, blocked, timeout, dns ..."""
    words: str = Field("", max_length=300)
    """The platform's own words, or the error in short (addresses left out)."""
    changed: bool | None = None
    """present: whether its canonical text (or post text) differs from the newest capture's
    (None: not compared)."""
    worker: str
    """Which worker checked (hostname:pid)."""

    def msg_id(self) -> str:
        return f"checked:{self.link_id}:{self.seq}"
