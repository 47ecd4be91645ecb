"""Capture jobs and what a worker says while and after running one (`job.capture`,
`job.media`, `capture.result`, `.done`, `.released`, `.binaries`)."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from shared.hooks.records import ArtifactRecord, BinaryRecord, HookRecord
from shared.hooks.retry import MAX_ATTEMPTS
from shared.messages.base import Message


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
    more: list[HookRecord] = Field(default_factory=list)
    """Records sent with it, applied in order after `record` (a worker sends the queued
    results of a snapshot's hooks with its next record, and a hook's Artifact records with
    its final result)."""

    @property
    def records(self) -> list[HookRecord]:
        """Every record of the event, in the order they are applied."""
        return [self.record, *self.more]

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
