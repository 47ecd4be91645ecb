"""Timestamp jobs (`job.timestamp`), run by the archiver beside its captures: ask each
pending authority for a token over the stored manifest, check it against the authority's
chain (system roots + TSA_CA_FILE), store the token (the reply as received) and its chain
(PEM) as new files beside the manifest (kind `timestamp`, named after the token's sha256:
nothing stored before is rewritten, the WACZ included), and report (`capture.timestamp`).
An authority that fails is reported with its error: asked again later, unless the failure
is final (refused, or a token that does not verify). A job is acked once its result is
stored by JetStream; S3 or NATS down: nak'ed with a delay.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
from cryptography import x509
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from shared import bus
from shared.capture.artifacts import artifact_key, snapshot_prefix
from shared.errors import BusError, StorageError
from shared.evidence import tsa
from shared.evidence.manifest import EVIDENCE_PLUGIN, fingerprint, token_stem
from shared.hooks.records import ArtifactRecord
from shared.messages import EvidenceVerdict, TimestampJob, TimestampOutcome, TimestampResult
from shared.s3 import ObjectStore
from shared.subjects import CAPTURE_TIMESTAMP, ConsumerSpec

log = logging.getLogger(__name__)


@dataclass
class TimestampConfig:
    """How the archiver runs timestamp jobs."""

    consumer: ConsumerSpec
    s3_prefix: str
    worker_id: str
    ca_file: Path | None = None
    timeout_s: float = 20.0
    nak_delay_s: float = 30.0


class Timestamper:
    """Runs one timestamp job at a time."""

    def __init__(
        self, cfg: TimestampConfig, store: ObjectStore, client: httpx.AsyncClient,
        roots: list[x509.Certificate],
    ) -> None:  # fmt: skip
        self.cfg, self.store, self.client, self.roots = cfg, store, client, roots

    def key(self, job: TimestampJob, path: str) -> str:
        folder = snapshot_prefix(self.cfg.s3_prefix, job.link_id, job.snapshot_id)
        return artifact_key(folder, EVIDENCE_PLUGIN, path)

    async def put(self, job: TimestampJob, path: str, data: bytes, ctype: str) -> ArtifactRecord:
        key = self.key(job, path)
        size, digest = await self.store.put_bytes(key, data, ctype)
        return ArtifactRecord(
            plugin=EVIDENCE_PLUGIN, kind="timestamp", path=path, s3_key=key,
            content_type=ctype, bytes=size, sha256=digest,
        )  # fmt: skip

    async def ask(self, job: TimestampJob, authority: str, manifest: bytes) -> TimestampOutcome:
        """One authority's token, checked and stored (or its error)."""
        try:
            token = await tsa.timestamp(
                self.client, authority, manifest, self.roots, self.cfg.timeout_s
            )
        except tsa.TimestampError as exc:
            log.info("%s: no timestamp from %s: %s", job.snapshot_id, authority, exc)
            return TimestampOutcome(
                authority=authority, granted=False, error=str(exc), final=exc.final
            )
        sha = hashlib.sha256(token.response_der).hexdigest()
        stem = token_stem(job.fingerprint, authority, sha)
        return TimestampOutcome(
            authority=authority, granted=True, time=token.time,
            token=await self.put(job, f"{stem}.tsr", token.response_der, tsa.REPLY_TYPE),
            chain=await self.put(job, f"{stem}.pem", token.chain_pem.encode(), tsa.CHAIN_TYPE),
        )  # fmt: skip

    async def run(self, job: TimestampJob) -> TimestampResult:
        """Ask every pending authority for a token over the stored manifest; the result."""
        manifest = await self.store.get_bytes(job.manifest_key)
        now = datetime.now(UTC)
        if fingerprint(manifest) != job.fingerprint:  # the stored bytes are not the recorded
            return self.result(job, [], "mismatch", "the stored manifest is another", now)
        outcomes = list(
            await asyncio.gather(*(self.ask(job, a, manifest) for a in job.authorities))
        )
        granted = sum(o.granted for o in outcomes)
        return self.result(job, outcomes, "verified", f"{granted} tokens granted", now)

    def result(
        self,
        job: TimestampJob,
        outcomes: list[TimestampOutcome],
        verdict: EvidenceVerdict,
        detail: str,
        now: datetime,
    ) -> TimestampResult:
        return TimestampResult(
            link_id=job.link_id, snapshot_id=job.snapshot_id, fingerprint=job.fingerprint,
            round=job.round, worker=self.cfg.worker_id, outcomes=outcomes, verdict=verdict,
            detail=detail, checked_at=now,
        )  # fmt: skip


async def handle(ts: Timestamper, js: JetStreamContext, msg: Msg, nak_delay_s: float) -> None:
    """One job message to its ack (result stored), term (invalid) or nak (S3/NATS down)."""
    job = await bus.accept(msg, TimestampJob, "timestamp job")
    if job is None:
        return
    try:
        result = await ts.run(job)
        await bus.publish(js, CAPTURE_TIMESTAMP, result)
        await msg.ack_sync()
    except (StorageError, BusError) as exc:
        log.warning("timestamp job of %s retried in %.0fs: %s", job.snapshot_id, nak_delay_s, exc)
        await bus.nak_later(msg, nak_delay_s)


async def run_timestamper(
    cfg: TimestampConfig, js: JetStreamContext, store: ObjectStore, stop: asyncio.Event
) -> None:
    """Take timestamp jobs one at a time until stop is set."""
    roots = await asyncio.to_thread(tsa.trusted_roots, cfg.ca_file)
    sub = await bus.pull_subscribe(js, cfg.consumer)
    async with httpx.AsyncClient(follow_redirects=True) as client:
        ts = Timestamper(cfg, store, client, roots)
        while not stop.is_set():
            for msg in await bus.fetch(sub, 1, timeout=1.0):
                await handle(ts, js, msg, cfg.nak_delay_s)
