"""Streams, subjects and consumers: declared once, imported everywhere."""

from __future__ import annotations

from dataclasses import dataclass, replace

from nats.js.api import RetentionPolicy

from shared.messages import (
    CaptureDone,
    CaptureEvent,
    CaptureJob,
    CheckCommand,
    EvidenceReport,
    ExcludeCommand,
    ExternalArchiveJob,
    ExternalArchiveResult,
    FeedGap,
    FeedPost,
    HostReleased,
    IncludeCommand,
    LivenessCheck,
    LivenessResult,
    Message,
    RearchiveCommand,
    RetryCommand,
    SubmitCommand,
    TakedownCommand,
    TimestampJob,
    TimestampResult,
    UndoTakedownCommand,
    WorkerBinaries,
)

FEED_POST = "feed.post"
FEED_GAP = "feed.gap"
JOB_CAPTURE = "job.capture"
JOB_MEDIA = "job.media"
JOB_TIMESTAMP = "job.timestamp"
JOB_CHECK = "job.check"
JOB_EXTERNAL = "job.external"
CAPTURE_RESULT = "capture.result"
CAPTURE_DONE = "capture.done"
CAPTURE_RELEASED = "capture.released"
CAPTURE_BINARIES = "capture.binaries"
CAPTURE_EVIDENCE = "capture.evidence"
CAPTURE_TIMESTAMP = "capture.timestamp"
CAPTURE_EXTERNAL = "capture.external"
CHECK_RESULT = "check.result"
CMD_SUBMIT = "cmd.submit"
CMD_REARCHIVE = "cmd.rearchive"
CMD_TAKEDOWN = "cmd.takedown"
CMD_EXCLUDE = "cmd.exclude"
CMD_RETRY = "cmd.retry"
CMD_CHECK = "cmd.check"
CMD_UNDO = "cmd.undo"
CMD_INCLUDE = "cmd.include"

MODELS: dict[str, type[Message]] = {
    FEED_POST: FeedPost,
    FEED_GAP: FeedGap,
    JOB_CAPTURE: CaptureJob,
    JOB_MEDIA: CaptureJob,
    JOB_TIMESTAMP: TimestampJob,
    JOB_CHECK: LivenessCheck,
    JOB_EXTERNAL: ExternalArchiveJob,
    CAPTURE_RESULT: CaptureEvent,
    CAPTURE_DONE: CaptureDone,
    CAPTURE_RELEASED: HostReleased,
    CAPTURE_BINARIES: WorkerBinaries,
    CAPTURE_EVIDENCE: EvidenceReport,
    CAPTURE_TIMESTAMP: TimestampResult,
    CAPTURE_EXTERNAL: ExternalArchiveResult,
    CHECK_RESULT: LivenessResult,
    CMD_SUBMIT: SubmitCommand,
    CMD_REARCHIVE: RearchiveCommand,
    CMD_TAKEDOWN: TakedownCommand,
    CMD_EXCLUDE: ExcludeCommand,
    CMD_RETRY: RetryCommand,
    CMD_CHECK: CheckCommand,
    CMD_UNDO: UndoTakedownCommand,
    CMD_INCLUDE: IncludeCommand,
}
"""The one payload model of every subject."""


@dataclass(frozen=True)
class StreamSpec:
    """A JetStream stream: name, subjects, retention."""

    name: str
    subjects: tuple[str, ...]
    retention: RetentionPolicy
    duplicate_window_s: float = 120.0


FEED = StreamSpec("FEED", (FEED_POST, FEED_GAP), RetentionPolicy.LIMITS)
JOBS = StreamSpec(
    "JOBS",
    (JOB_CAPTURE, JOB_MEDIA, JOB_TIMESTAMP, JOB_CHECK, JOB_EXTERNAL),
    RetentionPolicy.WORK_QUEUE,
)
RESULTS = StreamSpec(
    "RESULTS",
    (
        CAPTURE_RESULT,
        CAPTURE_DONE,
        CAPTURE_RELEASED,
        CAPTURE_BINARIES,
        CAPTURE_EVIDENCE,
        CAPTURE_TIMESTAMP,
        CAPTURE_EXTERNAL,
        CHECK_RESULT,
    ),
    RetentionPolicy.LIMITS,
)
COMMANDS = StreamSpec(
    "COMMANDS",
    (
        CMD_SUBMIT,
        CMD_REARCHIVE,
        CMD_TAKEDOWN,
        CMD_EXCLUDE,
        CMD_RETRY,
        CMD_CHECK,
        CMD_UNDO,
        CMD_INCLUDE,
    ),
    RetentionPolicy.LIMITS,
)
STREAMS: tuple[StreamSpec, ...] = (FEED, JOBS, RESULTS, COMMANDS)

POLLER_BACKFILL = "poller.backfill"
"""NATS request/reply, in no stream: `dla backfill` asks the poller to read a whole topic
(BackfillRequest) and waits for its answer (BackfillReport); the poller's queue group
`POLLER_QUEUE` answers once however many pollers run."""
POLLER_QUEUE = "poller"

POLLER_POSITIONS = "POLLER_POSITIONS"
"""Key-value bucket: each feed's poller position (newest post id, last guids), one key a feed."""
FEED_HEALTH = "FEED_HEALTH"
"""Key-value bucket: each feed's health after its last poll (shared.feed_health), one key a
feed, for the owner's console and `dla status`."""


@dataclass(frozen=True)
class ConsumerSpec:
    """A durable pull consumer.

    ack_wait_s is a default: services set it from their settings with ``with_ack_wait``
    (``JOB_ACK_WAIT_SECONDS`` for workers, ``WRITER_ACK_WAIT_SECONDS`` for the writer).
    """

    stream: StreamSpec
    durable: str
    filter_subject: str
    ack_wait_s: float
    max_deliver: int = -1

    def with_ack_wait(self, seconds: float) -> ConsumerSpec:
        """This consumer with another ack wait."""
        return replace(self, ack_wait_s=seconds)


WRITER_FEED = ConsumerSpec(FEED, "writer-feed", "feed.>", ack_wait_s=30)
WRITER_RESULTS = ConsumerSpec(RESULTS, "writer-results", "capture.>", ack_wait_s=30)
WRITER_COMMANDS = ConsumerSpec(COMMANDS, "writer-commands", "cmd.>", ack_wait_s=30)
WRITER_CHECKS = ConsumerSpec(RESULTS, "writer-checks", "check.>", ack_wait_s=30)
ARCHIVER_JOBS = ConsumerSpec(JOBS, "archiver", JOB_CAPTURE, ack_wait_s=10)
MEDIA_JOBS = ConsumerSpec(JOBS, "media", JOB_MEDIA, ack_wait_s=10)
TIMESTAMP_JOBS = ConsumerSpec(JOBS, "timestamper", JOB_TIMESTAMP, ack_wait_s=60)
CHECKER_JOBS = ConsumerSpec(JOBS, "checker", JOB_CHECK, ack_wait_s=10)
"""Liveness checks, shared by every archiver (their own consumer: a check never waits behind
a capture for a slot)."""
EXTERNAL_JOBS = ConsumerSpec(JOBS, "external", JOB_EXTERNAL, ack_wait_s=30)
"""Submissions to the public archives, shared by every archiver (their own consumer: a slow
service never holds a capture's slot)."""
CONSUMERS: tuple[ConsumerSpec, ...] = (
    WRITER_FEED,
    WRITER_RESULTS,
    WRITER_COMMANDS,
    WRITER_CHECKS,
    ARCHIVER_JOBS,
    MEDIA_JOBS,
    TIMESTAMP_JOBS,
    CHECKER_JOBS,
    EXTERNAL_JOBS,
)
