"""One pydantic model per NATS subject; payloads are JSON.

Every message knows its own ``Nats-Msg-Id`` (derived from its content or ids) so that
JetStream drops duplicates of retried publishes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from shared.hooks.records import ArtifactRecord, BinaryRecord, HookRecord
from shared.hooks.retry import MAX_ATTEMPTS


class Message(BaseModel):
    """Base of every bus payload."""

    model_config = ConfigDict(extra="forbid")

    def msg_id(self) -> str:
        """The Nats-Msg-Id used for JetStream de-duplication."""
        raise NotImplementedError


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


class CaptureJob(Message):
    """``job.capture`` / ``job.media``: capture one link as one snapshot."""

    job_id: int
    """archive_jobs.id in the writer's database."""
    link_id: int
    """links.id."""
    snapshot_id: str
    """Id of the snapshot this capture produces (stable across retries of the job)."""
    url: str
    """The URL to capture (canonical form)."""
    attempt: int = 1
    """1 for the first dispatch, +1 for every retry or re-dispatch."""
    max_attempts: int = Field(MAX_ATTEMPTS, ge=1)
    """Attempts in all (the writer's MAX_ATTEMPTS): on the last, hard failures are final."""
    hooks: list[str] | None = None
    """Only these hook file names (retries of failed hooks); None runs every hook."""
    deadline: datetime
    """After this the writer considers the job lost and dispatches it again."""
    kept: list[ArtifactRecord] = Field(default_factory=list)
    """The snapshot's files from its earlier attempts (a retry of some hooks): the
    capture's manifest and WACZ list them beside this attempt's."""
    final_url: str | None = None
    """The snapshot's final URL as known so far (for the manifest of a retry)."""

    def msg_id(self) -> str:
        return f"job:{self.job_id}:{self.attempt}"


class CaptureEvent(Message):
    """``capture.result``: one hook record streamed from a worker while a snapshot runs."""

    job_id: int
    """The job being worked on."""
    link_id: int
    """The link being captured."""
    snapshot_id: str
    """The snapshot."""
    attempt: int
    """The job attempt this record belongs to."""
    run: int = 1
    """JetStream delivery number of the job message within the attempt (1 = first)."""
    seq: int
    """Order of this record within the attempt (0, 1, 2, ...)."""
    worker: str
    """Which worker produced it (hostname:pid)."""
    record: HookRecord
    """The record itself."""

    def msg_id(self) -> str:
        return f"cap:{self.snapshot_id}:{self.attempt}:{self.run}:{self.seq}"


class AttemptReport(Message):
    """What a worker says of one run of one job attempt (the fields every such report has)."""

    job_id: int
    """The job."""
    link_id: int
    """The link."""
    snapshot_id: str
    """The snapshot."""
    attempt: int
    """The attempt."""
    run: int = 1
    """JetStream delivery number of the job message within the attempt (1 = first)."""
    worker: str
    """Which worker."""


class CaptureDone(AttemptReport):
    """``capture.done``: a worker finished (or gave up on) one job attempt."""

    records: int
    """How many CaptureEvents it published for this attempt (seq 0..records-1)."""
    retry_hooks: list[str] = Field(default_factory=list)
    """Hooks that failed hard and should be retried later with backoff."""
    error: str | None = None
    """Set when the whole attempt failed (e.g. storage down)."""

    def msg_id(self) -> str:
        return f"done:{self.snapshot_id}:{self.attempt}:{self.run}"


class HostReleased(AttemptReport):
    """``capture.released``: a job attempt is done talking to its link's host (every hook that
    contacts it has ended: navigation, page adjustments, the raw fetch, platform API calls).
    The writer stops counting the job against its domain's `PER_DOMAIN_CONCURRENCY`, so the
    next capture of the host starts while this one post-processes and uploads."""

    def msg_id(self) -> str:
        return f"released:{self.snapshot_id}:{self.attempt}:{self.run}"


Verdict = Literal["verified", "mismatch"]


class EvidenceReport(AttemptReport):
    """``capture.evidence``: a capture's manifest (and its WACZ, when it kept a WARC) are
    stored, each also sent as an Artifact record; what their check found."""

    manifest_key: str
    """Object key of manifest.json."""
    fingerprint: str
    """sha256 (hex) of manifest.json: the capture's fingerprint."""
    wacz_key: str | None = None
    """Object key of the capture's WACZ (None: no WARC was kept)."""
    verdict: Verdict
    """What the worker's check of the files it stored found."""
    detail: str
    """The check's one-line summary."""
    checked_at: datetime

    def msg_id(self) -> str:
        return f"evidence:{self.snapshot_id}:{self.attempt}:{self.run}"


class TimestampJob(Message):
    """``job.timestamp``: ask these authorities for tokens over a stored manifest."""

    link_id: int
    snapshot_id: str
    manifest_key: str
    fingerprint: str
    """The manifest's sha256: a manifest whose bytes differ is not timestamped."""
    wacz_key: str | None = None
    """The capture's WACZ, whose datapackage-digest.json gets the tokens too."""
    authorities: list[str]
    """The authorities whose tokens are still pending."""
    granted: dict[str, str] = Field(default_factory=dict)
    """Tokens granted before, authority -> token key (the WACZ carries them with the new)."""
    round: int = Field(ge=1)
    """How many times these tokens were asked for (1 = first)."""

    def msg_id(self) -> str:
        return f"ts:{self.snapshot_id}:{self.fingerprint[:16]}:{self.round}"


class TimestampOutcome(BaseModel):
    """One authority's answer."""

    authority: str
    granted: bool
    error: str | None = None
    time: datetime | None = None
    """The time the authority certified."""
    token: ArtifactRecord | None = None
    """The stored TimeStampResp (DER), kind `timestamp`."""
    chain: ArtifactRecord | None = None
    """The stored chain from the token's signer to its root (PEM), kind `timestamp`."""


class TimestampResult(Message):
    """``capture.timestamp``: what a timestamp job got."""

    link_id: int
    snapshot_id: str
    fingerprint: str
    round: int
    worker: str
    outcomes: list[TimestampOutcome]
    wacz: ArtifactRecord | None = None
    """The WACZ again, its datapackage-digest.json now carrying every granted token."""
    verdict: Verdict
    detail: str
    checked_at: datetime

    def msg_id(self) -> str:
        return f"tsr:{self.snapshot_id}:{self.fingerprint[:16]}:{self.round}"


class WorkerBinaries(Message):
    """``capture.binaries``: what a capture worker found of its plugins' binaries at start."""

    worker: str
    """Which worker (hostname:pid)."""
    machine: str
    """The machine it runs on (hostname); binaries are recorded per machine."""
    detected_at: datetime
    """When it looked."""
    binaries: list[BinaryRecord]
    """One record per binary named in a plugin's binaries.jsonl (status failed = missing)."""

    def msg_id(self) -> str:
        return f"binaries:{self.worker}:{self.detected_at.isoformat()}"


class SubmitCommand(Message):
    """``cmd.submit``: a person asked to archive a URL."""

    url: str
    """The URL as submitted."""
    request_id: str
    """Unique id of the request."""
    requested_at: datetime
    """When."""

    def msg_id(self) -> str:
        return f"submit:{self.request_id}"


class RearchiveCommand(Message):
    """``cmd.rearchive``: a person asked to capture a known link again now."""

    link_id: int
    """The link."""
    request_id: str
    """Unique id of the request."""
    requested_at: datetime
    """When."""

    def msg_id(self) -> str:
        return f"rearchive:{self.request_id}"


class TakedownCommand(Message):
    """``cmd.takedown``: an admin took a link down (hidden everywhere, objects removed)."""

    link_id: int
    """The link."""
    reason: str
    """Why (kept in the audit table, never public)."""
    admin: str
    """The name of the admin token that asked (never the secret)."""
    request_id: str
    """Unique id of the request."""
    requested_at: datetime
    """When."""

    def msg_id(self) -> str:
        return f"takedown:{self.request_id}"


class ExcludeCommand(Message):
    """``cmd.exclude``: an admin excluded a domain (and its subdomains) from archiving."""

    domain: str
    """The domain, lower-case, no scheme."""
    reason: str = ""
    """Why."""
    admin: str
    """The name of the admin token that asked."""
    request_id: str
    """Unique id of the request."""
    requested_at: datetime
    """When."""

    def msg_id(self) -> str:
        return f"exclude:{self.request_id}"


class RetryCommand(Message):
    """``cmd.retry``: an admin asked to capture failed links again now."""

    domain: str | None = None
    """Only links of this domain (and its subdomains)."""
    since: datetime | None = None
    """Only links that failed at or after this time."""
    admin: str
    """The name of the admin token that asked."""
    request_id: str
    """Unique id of the request."""
    requested_at: datetime
    """When."""

    def msg_id(self) -> str:
        return f"retry:{self.request_id}"


Answer = Literal["present", "gone", "unknown"]
"""What a liveness check found of an original (see services/writer/liveness/verdict.py)."""


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


class CheckCommand(Message):
    """``cmd.check``: an operator asked to check a link's original now (`dla check`)."""

    link_id: int
    """The link."""
    request_id: str
    """Unique id of the request."""
    requested_at: datetime
    """When."""

    def msg_id(self) -> str:
        return f"checknow:{self.request_id}"
