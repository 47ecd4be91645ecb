"""A capture's evidence and its timestamps (`capture.evidence`, `job.timestamp`,
`capture.timestamp`)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from shared.hooks.records import ArtifactRecord
from shared.messages.base import Message
from shared.messages.capture import AttemptReport

EvidenceVerdict = Literal["verified", "mismatch"]
TimestampFinal = Literal["refused", "invalid"]
"""An authority's answer that ends the asking: it refused (PKIStatus rejection), or its
token does not verify. Any other failure (down, slow, no reply at all) is asked again."""


class EvidenceReport(AttemptReport):
    """``capture.evidence``: a capture's manifest (and its WACZ, when it kept a WARC) are
    stored, each also sent as an Artifact record; what their check found."""

    manifest_key: str
    """Object key of manifest.json."""
    fingerprint: str
    """sha256 (hex) of manifest.json: the capture's fingerprint."""
    wacz_key: str | None = None
    """Object key of the capture's WACZ (None: no WARC was kept)."""
    verdict: EvidenceVerdict
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
    authorities: list[str]
    """The authorities whose tokens are still pending."""
    round: int = Field(ge=1)
    """How many times these tokens were asked for (1 = first)."""

    def msg_id(self) -> str:
        return f"ts:{self.snapshot_id}:{self.fingerprint[:16]}:{self.round}"


class TimestampOutcome(BaseModel):
    """One authority's answer."""

    authority: str
    granted: bool
    error: str | None = None
    final: TimestampFinal | None = None
    """Set when the authority's answer is final (not asked again): why is `error`."""
    time: datetime | None = None
    """The time the authority certified."""
    token: ArtifactRecord | None = None
    """The stored TimeStampResp (the authority's bytes as received), kind `timestamp`."""
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
    verdict: EvidenceVerdict
    """`mismatch` when the stored manifest is not the one recorded (its tokens not asked)."""
    detail: str
    checked_at: datetime

    def msg_id(self) -> str:
        return f"tsr:{self.snapshot_id}:{self.fingerprint[:16]}:{self.round}"
