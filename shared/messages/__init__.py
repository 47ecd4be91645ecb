"""One pydantic model per NATS subject; payloads are JSON.

Every message knows its own ``Nats-Msg-Id`` (derived from its content or ids) so that
JetStream drops duplicates of retried publishes. The models live by stream: `feed`,
`capture`, `evidence`, `external`, `liveness`, `commands`; every one is imported from here.
"""

from shared.messages.base import Message
from shared.messages.capture import (
    AttemptReport,
    CaptureDone,
    CaptureEvent,
    CaptureJob,
    HostReleased,
    WorkerBinaries,
)
from shared.messages.commands import (
    CheckCommand,
    Command,
    ExcludeCommand,
    IncludeCommand,
    RearchiveCommand,
    RetryCommand,
    SubmitCommand,
    TakedownCommand,
    UndoTakedownCommand,
)
from shared.messages.evidence_report import (
    EvidenceReport,
    EvidenceVerdict,
    TimestampFinal,
    TimestampJob,
    TimestampOutcome,
    TimestampResult,
)
from shared.messages.external import (
    ExternalAnswer,
    ExternalArchiveJob,
    ExternalArchiveResult,
    ExternalOutcome,
    ExternalService,
)
from shared.messages.feed import (
    BackfillReport,
    BackfillRequest,
    FeedGap,
    FeedPost,
    LinkOccurrence,
)
from shared.messages.liveness import LivenessCheck, LivenessResult
from shared.platforms.outcome import Answer

__all__ = [
    "Answer",
    "AttemptReport",
    "BackfillReport",
    "BackfillRequest",
    "CaptureDone",
    "CaptureEvent",
    "CaptureJob",
    "CheckCommand",
    "Command",
    "EvidenceReport",
    "EvidenceVerdict",
    "ExcludeCommand",
    "ExternalAnswer",
    "ExternalArchiveJob",
    "ExternalArchiveResult",
    "ExternalOutcome",
    "ExternalService",
    "FeedGap",
    "FeedPost",
    "HostReleased",
    "IncludeCommand",
    "LinkOccurrence",
    "LivenessCheck",
    "LivenessResult",
    "Message",
    "RearchiveCommand",
    "RetryCommand",
    "SubmitCommand",
    "TakedownCommand",
    "TimestampFinal",
    "TimestampJob",
    "TimestampOutcome",
    "TimestampResult",
    "UndoTakedownCommand",
    "WorkerBinaries",
]
