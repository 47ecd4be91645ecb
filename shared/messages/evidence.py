"""A capture's evidence and its timestamps (`capture.evidence`, `job.timestamp`,
`capture.timestamp`)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from shared.hooks.records import ArtifactRecord
from shared.messages.base import Message
from shared.messages.capture import AttemptReport

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
