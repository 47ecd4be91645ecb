"""Submission jobs (`job.external`), run by the archiver beside its captures: submit an
archived link's URL to one public archive (or poll the job an earlier round left in
progress), poll it while it is in progress until the job's `poll_until`, and report what
the service said (`capture.external`). The result of our own capture is never touched:
a service that refuses, limits or is down only changes what the link says of it. A job is
acked once its result is stored by JetStream; NATS down: nak'ed with a delay."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

import httpx
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from shared import bus
from shared.errors import BusError
from shared.external import TITLES
from shared.external.answer import unreachable
from shared.external.archive_today import ArchiveToday
from shared.external.settings import ExternalServiceSettings
from shared.external.wayback import Wayback
from shared.messages import (
    ExternalAnswer,
    ExternalArchiveJob,
    ExternalArchiveResult,
    ExternalService,
)
from shared.subjects import CAPTURE_EXTERNAL, ConsumerSpec

log = logging.getLogger(__name__)


class Service(Protocol):
    """A public archive's two questions."""

    async def submit(self, url: str) -> ExternalAnswer: ...

    async def poll(self, job_ref: str) -> ExternalAnswer: ...


@dataclass
class SubmitConfig:
    """How the archiver runs submission jobs."""

    consumer: ConsumerSpec
    worker_id: str
    services: ExternalServiceSettings
    user_agent: str
    nak_delay_s: float = 30.0


class Submitter:
    """Runs one submission job at a time."""

    def __init__(self, cfg: SubmitConfig, client: httpx.AsyncClient) -> None:
        s = cfg.services
        self.cfg = cfg
        self.services: dict[ExternalService, Service] = {
            "wayback": Wayback(client, s.wayback_url, s.wayback_access_key, s.wayback_secret_key),
            "archive_today": ArchiveToday(client, s.archive_today_url),
        }

    async def ask(self, job: ExternalArchiveJob) -> ExternalAnswer:
        """The service's answer once its job is done, or when the polls run out."""
        service = self.services[job.service]
        try:
            answer = await (service.poll(job.job_ref) if job.job_ref else service.submit(job.url))
            pause = self.cfg.services.external_archive_poll_seconds
            while (
                answer.outcome == "pending"
                and answer.job_ref
                and datetime.now(UTC).timestamp() + pause < job.poll_until.timestamp()
            ):
                await asyncio.sleep(pause)
                answer = await service.poll(answer.job_ref)
        except httpx.HTTPError as exc:
            log.info("link %d: %s: %s", job.link_id, job.service, type(exc).__name__)
            return unreachable(TITLES[job.service], exc)
        return answer

    async def run(self, job: ExternalArchiveJob) -> ExternalArchiveResult:
        answer = await self.ask(job)
        if answer.error:
            log.info("link %d: %s submission: %s", job.link_id, job.service, answer.error)
        return ExternalArchiveResult(
            link_id=job.link_id, service=job.service, round=job.round, worker=self.cfg.worker_id,
            answer=answer, checked_at=datetime.now(UTC),
        )  # fmt: skip


async def handle(sub: Submitter, js: JetStreamContext, msg: Msg, nak_delay_s: float) -> None:
    """One job message to its ack (result stored), term (invalid) or nak (NATS down)."""
    job = await bus.accept(msg, ExternalArchiveJob, "submission job")
    if job is None:
        return
    progress = asyncio.create_task(bus.keep_in_progress(msg, sub.cfg.consumer.ack_wait_s / 3))
    try:
        result = await sub.run(job)
        await bus.publish(js, CAPTURE_EXTERNAL, result)
        await msg.ack_sync()
    except BusError as exc:
        log.warning("submission of link %d retried in %.0fs: %s", job.link_id, nak_delay_s, exc)
        await bus.nak_later(msg, nak_delay_s)
    finally:
        progress.cancel()


async def run_submitter(cfg: SubmitConfig, js: JetStreamContext, stop: asyncio.Event) -> None:
    """Take submission jobs one at a time until stop is set."""
    sub = await bus.pull_subscribe(js, cfg.consumer)
    timeout = httpx.Timeout(cfg.services.external_archive_timeout_seconds)
    headers = {"User-Agent": cfg.user_agent}
    async with httpx.AsyncClient(timeout=timeout, headers=headers) as client:
        submitter = Submitter(cfg, client)
        while not stop.is_set():
            for msg in await bus.fetch(sub, 1, timeout=1.0):
                await handle(submitter, js, msg, cfg.nak_delay_s)
