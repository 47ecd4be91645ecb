"""Timestamp jobs (`job.timestamp`), run by the archiver beside its captures: ask each
pending authority for a token over the stored manifest, check it against the authority's
chain (system roots + TSA_CA_FILE), store the token (DER) and its chain (PEM) beside the
manifest (kind `timestamp`), put every granted token into the WACZ's
datapackage-digest.json, and report (`capture.timestamp`). An authority that fails is
reported with its error; the writer asks again later. A job is acked once its result is
stored by JetStream; S3 or NATS down: nak'ed with a delay.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from cryptography import x509
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from shared import bus
from shared.capture.artifacts import artifact_key
from shared.errors import BusError, StorageError
from shared.evidence import tsa
from shared.evidence.manifest import EVIDENCE_PLUGIN, WACZ_PATH, fingerprint
from shared.evidence.verify import Verdict, check_wacz
from shared.evidence.wacz import TimestampProof, with_proofs
from shared.hooks.records import ArtifactRecord
from shared.messages import TimestampJob, TimestampOutcome, TimestampResult
from shared.s3 import ObjectStore
from shared.subjects import CAPTURE_TIMESTAMP, ConsumerSpec

log = logging.getLogger(__name__)


@dataclass
class TimestampConfig:
    """How the archiver runs timestamp jobs."""

    consumer: ConsumerSpec
    s3_prefix: str
    scratch_dir: Path
    worker_id: str
    ca_file: Path | None = None
    timeout_s: float = 20.0
    nak_delay_s: float = 30.0


def token_paths(authority: str) -> tuple[str, str]:
    """The token's and its chain's paths in the evidence folder, named after the authority."""
    host = re.sub(r"[^a-z0-9]+", "-", (urlsplit(authority).hostname or "tsa").lower())[:40]
    tag = hashlib.sha256(authority.encode()).hexdigest()[:8]
    return f"timestamps/{host}-{tag}.tsr", f"timestamps/{host}-{tag}.pem"


class Timestamper:
    """Runs one timestamp job at a time."""

    def __init__(
        self, cfg: TimestampConfig, store: ObjectStore, client: httpx.AsyncClient,
        roots: list[x509.Certificate],
    ) -> None:  # fmt: skip
        self.cfg, self.store, self.client, self.roots = cfg, store, client, roots
        self.manifest: bytes | None = None
        """The manifest of the job under way."""

    def key(self, job: TimestampJob, path: str) -> str:
        return artifact_key(self.cfg.s3_prefix, job.link_id, job.snapshot_id, EVIDENCE_PLUGIN, path)

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
            return TimestampOutcome(authority=authority, granted=False, error=str(exc))
        tsr, pem = token_paths(authority)
        return TimestampOutcome(
            authority=authority, granted=True, time=token.time,
            token=await self.put(job, tsr, token.response_der, tsa.REPLY_TYPE),
            chain=await self.put(job, pem, token.chain_pem.encode(), tsa.CHAIN_TYPE),
        )  # fmt: skip

    async def manifest_of(self, _: str) -> bytes:
        assert self.manifest is not None
        return self.manifest

    async def run(self, job: TimestampJob) -> TimestampResult:
        """Ask every pending authority; put the granted tokens into the WACZ; the result."""
        manifest = self.manifest = await self.store.get_bytes(job.manifest_key)
        now = datetime.now(UTC)
        if fingerprint(manifest) != job.fingerprint:  # a newer attempt replaced it
            return self.result(job, [], None, "mismatch", "the stored manifest is another", now)
        outcomes = list(
            await asyncio.gather(*(self.ask(job, a, manifest) for a in job.authorities))
        )
        verdict = Verdict()
        wacz = None
        if job.wacz_key and any(o.granted for o in outcomes):
            wacz = await self.restamp_wacz(job, outcomes, verdict)
        else:
            verdict.add("tokens", True, f"{sum(o.granted for o in outcomes)} granted")
        return self.result(
            job, outcomes, wacz, "verified" if verdict.ok else "mismatch", verdict.summary(), now
        )

    async def restamp_wacz(
        self, job: TimestampJob, outcomes: list[TimestampOutcome], verdict: Verdict
    ) -> ArtifactRecord | None:
        """The WACZ again with every granted token of the manifest in its digest file, checked."""
        assert job.wacz_key is not None
        folder = self.cfg.scratch_dir / f"ts-{job.snapshot_id}-{job.round}"
        folder.mkdir(parents=True, exist_ok=True)
        try:
            proofs = [await self.proof(a, key) for a, key in job.granted.items()]
            proofs += [
                TimestampProof(
                    o.authority,
                    await self.store.get_bytes(o.token.s3_key),
                    (await self.store.get_bytes(o.chain.s3_key)).decode(),
                    o.time.isoformat(),
                )
                for o in outcomes
                if o.granted and o.token and o.chain and o.time
            ]
            src, out = folder / "old.wacz", folder / WACZ_PATH
            await self.store.download_file(job.wacz_key, src)
            await asyncio.to_thread(with_proofs, src, out, proofs)
            await asyncio.to_thread(check_wacz, verdict, out, self.roots, WACZ_PATH)
            size, digest = await self.store.put_file(job.wacz_key, out, "application/wacz")
        finally:
            await asyncio.to_thread(shutil.rmtree, folder, ignore_errors=True)
        return ArtifactRecord(
            plugin=EVIDENCE_PLUGIN, kind="wacz", path=WACZ_PATH, s3_key=job.wacz_key,
            content_type="application/wacz", bytes=size, sha256=digest,
        )  # fmt: skip

    async def proof(self, authority: str, token_key: str) -> TimestampProof:
        """A token granted before, from the store, as the WACZ carries it."""
        der = await self.store.get_bytes(token_key)
        chain = (await self.store.get_bytes(token_key.removesuffix(".tsr") + ".pem")).decode()
        token = tsa.check(authority, der, await self.manifest_of(token_key), self.roots)
        return TimestampProof(authority, der, chain, token.time.isoformat())

    def result(
        self, job: TimestampJob, outcomes: list[TimestampOutcome], wacz: ArtifactRecord | None,
        verdict: str, detail: str, now: datetime,
    ) -> TimestampResult:  # fmt: skip
        return TimestampResult(
            link_id=job.link_id, snapshot_id=job.snapshot_id, fingerprint=job.fingerprint,
            round=job.round, worker=self.cfg.worker_id, outcomes=outcomes, wacz=wacz,
            verdict="verified" if verdict == "verified" else "mismatch", detail=detail,
            checked_at=now,
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
