"""Submitting an archived link to the public archives (`job.external`, `capture.external`)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.messages.base import Message

ExternalService = Literal["wayback", "archive_today"]
"""The public archives a link can be submitted to: the Internet Archive's Wayback Machine
(Save Page Now 2) and archive.today."""
ExternalOutcome = Literal["archived", "pending", "later", "failed"]
"""What one submission job got: the public snapshot (`archived`); the service is still at it
when the job's polling bound passed (`pending`: polled again later, `job_ref`); the service
said not now (`later`: 429, too many captures; asked again after `retry_after_s`); the service
refused for good or the job cannot be done (`failed`, in words)."""


class ExternalArchiveJob(Message):
    """``job.external``: submit a link's URL to one public archive (or poll its job)."""

    link_id: int
    service: ExternalService
    url: str
    job_ref: str | None = None
    """The service's job of an earlier round, still in progress: polled, not submitted again."""
    round: int = Field(ge=1)
    poll_until: datetime
    """A job in progress at the service is polled until then at most (the writer's next try
    of it is later), then left to the next round."""

    def msg_id(self) -> str:
        return f"ext:{self.link_id}:{self.service}:{self.round}"


class ExternalAnswer(BaseModel):
    """What a public archive answered about one URL."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    outcome: ExternalOutcome
    snapshot_url: str | None = None
    captured_at: datetime | None = None
    """The time of the public snapshot (the service's, when it says)."""
    job_ref: str | None = None
    """The service's job still in progress (polled, not submitted again)."""
    retry_after_s: float | None = None
    """When the service said to ask again (None: the writer's growing delay)."""
    error: str | None = None
    """Why it is not archived, in words (the service's words when it gave some)."""


class ExternalArchiveResult(Message):
    """``capture.external``: what a submission job got."""

    link_id: int
    service: ExternalService
    round: int
    worker: str
    answer: ExternalAnswer
    checked_at: datetime

    def msg_id(self) -> str:
        return f"extr:{self.link_id}:{self.service}:{self.round}"
