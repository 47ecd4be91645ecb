"""A capture worker: takes jobs from a JetStream work queue, runs the snapshot's hooks,
uploads their output to S3 and streams every record to the writer.

The archiver and media services are this worker with different consumers and plugin sets.
Acknowledgement rules: a job is acked only after its records and its CaptureDone were
stored by JetStream; when S3 or NATS fail mid-job the message is nak'ed with a delay and
redelivered (nothing is lost); a job message that violates its model is terminated; a job
whose host has a long (likely stalled) job running here is nak'ed with a delay, so the slots
go to other hosts meanwhile (`shared/capture/slots.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import socket
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nats.aio.msg import Msg
from nats.js import JetStreamContext
from pydantic import ValidationError

from shared import bus, processes
from shared.capture import metrics
from shared.capture.artifacts import artifact_key, content_type, meta_key, snapshot_prefix
from shared.capture.evidence import EvidenceBuilder, capture_settings, software_of
from shared.capture.metrics import ARTIFACT_BYTES, HOOK_SECONDS, JOB_SECONDS, JOBS_DONE, S3_ERRORS
from shared.capture.slots import SlotPolicy, Slots, host_of
from shared.errors import BusError, StorageError
from shared.hooks.binary_detection import detect_binaries
from shared.hooks.config import load_plugin_config
from shared.hooks.limits import HookLimits
from shared.hooks.reads import plugin_reads, with_related
from shared.hooks.records import (
    ArchiveResultRecord,
    ArtifactRecord,
    BinaryRecord,
    FileRecord,
    HookRecord,
    ProgressRecord,
    SnapshotRecord,
)
from shared.hooks.snapshot_runner import HookSpec, SnapshotSpec, discover_hooks, run_snapshot
from shared.messages import CaptureDone, CaptureEvent, CaptureJob, HostReleased, WorkerBinaries
from shared.s3 import ObjectStore
from shared.subjects import (
    CAPTURE_BINARIES,
    CAPTURE_DONE,
    CAPTURE_EVIDENCE,
    CAPTURE_RELEASED,
    CAPTURE_RESULT,
    ConsumerSpec,
)

log = logging.getLogger(__name__)


SnapshotSession = Callable[[Path], AbstractAsyncContextManager[Mapping[str, str]]]
"""Opens per-snapshot resources for the hooks; yields extra env for them."""


@dataclass
class WorkerConfig:
    """How one worker process runs."""

    service: str
    consumer: ConsumerSpec
    plugins_dirs: Sequence[Path]
    scratch_dir: Path
    s3_prefix: str
    concurrency: int = 2
    long_job_s: float = 0.0
    """A job running this long stops holding a slot, and its host's other jobs are deferred
    while it runs (0 = never)."""
    max_long_jobs: int = 0
    """Long jobs set aside from the slots at once (what runs is at most concurrency + this)."""
    stop_drain_s: float = 5.0
    """On a stop, seconds the jobs under way get to finish before they are cancelled (their
    hooks killed, contexts closed) and nak'ed for another worker."""
    only_plugins: Collection[str] | None = None
    skip_plugins: Collection[str] = ()
    hook_env: dict[str, str] = field(default_factory=dict)
    nak_delay_s: float = 30.0
    limits: HookLimits = field(default_factory=HookLimits)
    """Memory and CPU-time limits of every hook process."""
    binaries: list[BinaryRecord] | None = None
    """What detect_binaries() found at worker start; None = look up per snapshot."""
    worker_id: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")
    snapshot_session: SnapshotSession | None = None
    """Per-snapshot resources for the hooks (the archiver's browser page): entered around
    the hook run with the snapshot folder, yields extra env for every hook."""
    evidence: bool = True
    """EVIDENCE_ENABLED: each capture's manifest and WACZ (shared/capture/evidence.py)."""
    wacz: bool = True
    """WACZ_ENABLED: the WACZ beside the manifest."""


class JobRun:
    """Streams one job attempt's records to the writer and uploads each hook's files."""

    def __init__(
        self, cfg: WorkerConfig, js: JetStreamContext, store: ObjectStore, job: CaptureJob, run: int
    ) -> None:
        self.cfg, self.js, self.store, self.job, self.run = cfg, js, store, job, run
        self.seq = 0
        self.uploaded: set[Path] = set()
        self.artifacts: list[ArtifactRecord] = []
        self.files: dict[tuple[str, str], FileRecord] = {}
        """What hooks said about their files, by (plugin, path): used at upload."""
        self.storage_error: StorageError | None = None
        self.downloaded: dict[str, int] = {}
        self.host_hooks: set[str] = set()
        """The job's hooks that talk to the link's host (`x-contacts-host`) still running."""
        self.released = False
        self.hooks: list[HookSpec] = []
        self.local: dict[str, Path] = {}
        """This run's uploaded files by key (the evidence packages its WARCs from them)."""
        self.final_url: str | None = None
        self.title: str | None = None

    def talks_to_host(self, hooks: Sequence[HookSpec]) -> None:
        """Remember which of the job's hooks contact the link's host."""
        self.hooks = list(hooks)
        self.host_hooks = {h.key for h in hooks if load_plugin_config(h.path.parent).contacts_host}

    async def release_host(self) -> None:
        """Tell the writer this attempt is done with the host (once): its domain slot goes
        to the next capture of the host while this one post-processes and uploads. A lost
        release only costs time: the slot is freed when the attempt is done, as without."""
        if self.released:
            return
        self.released = True
        try:
            await bus.publish(self.js, CAPTURE_RELEASED, HostReleased(**self.report_ids()))
        except BusError as exc:
            log.warning("%s: host release not sent: %s", self.job.snapshot_id, exc)

    def report_ids(self) -> dict[str, Any]:
        """The fields of every report on this run of the attempt (AttemptReport)."""
        job = self.job
        return {"job_id": job.job_id, "link_id": job.link_id, "snapshot_id": job.snapshot_id,
                "attempt": job.attempt, "run": self.run, "worker": self.cfg.worker_id}  # fmt: skip

    async def publish(self, record: HookRecord) -> None:
        """Publish one record as a CaptureEvent (raises BusError)."""
        event = CaptureEvent(
            job_id=self.job.job_id,
            link_id=self.job.link_id,
            snapshot_id=self.job.snapshot_id,
            attempt=self.job.attempt,
            run=self.run,
            seq=self.seq,
            worker=self.cfg.worker_id,
            record=record,
        )
        self.seq += 1
        await bus.publish(self.js, CAPTURE_RESULT, event)

    async def record(self, hook: HookSpec, record: HookRecord) -> None:
        """HookObserver: forward a record as it streams out of the hook (a File record is
        kept for the upload of its file instead; a Progress record also feeds the metrics)."""
        if isinstance(record, ProgressRecord):
            self.progress(hook.plugin, record)
        if isinstance(record, FileRecord):
            self.files[(hook.plugin, record.path)] = record
            return
        if isinstance(record, SnapshotRecord):
            self.final_url = record.final_url or self.final_url
            self.title = record.title or self.title
        await self.publish(record)

    def progress(self, plugin: str, record: ProgressRecord) -> None:
        """Download progress into the metrics (bytes so far, percent of the current job)."""
        last = self.downloaded.get(plugin, 0)
        delta = max(0, record.downloaded_bytes - last)
        self.downloaded[plugin] = max(last, record.downloaded_bytes)
        metrics.DOWNLOADED.labels(self.cfg.service, plugin).inc(delta)
        metrics.IN_PROGRESS.labels(self.cfg.service).inc(delta)
        if record.percent is not None:
            metrics.PERCENT.labels(self.cfg.service, plugin).set(record.percent)

    def forget_progress(self) -> None:
        """The job ended: its bytes are no longer in progress."""
        metrics.IN_PROGRESS.labels(self.cfg.service).dec(sum(self.downloaded.values()))
        self.downloaded.clear()

    async def hook_finished(
        self, hook: HookSpec, result: ArchiveResultRecord, output_dir: Path
    ) -> None:
        """HookObserver: release the host after the last hook that talks to it, upload the
        hook's new output files, then its final result."""
        if hook.key in self.host_hooks:
            self.host_hooks.discard(hook.key)
            if not self.host_hooks:
                await self.release_host()
        try:
            await self.upload_new_files(hook, output_dir)
        except StorageError as exc:
            self.storage_error = exc
            S3_ERRORS.labels(self.cfg.service, "upload").inc()
            log.warning("%s: upload failed: %s", self.job.snapshot_id, exc)
        if result.started_at is not None and result.ended_at is not None:
            seconds = (result.ended_at - result.started_at).total_seconds()
            HOOK_SECONDS.labels(self.cfg.service, hook.plugin, result.status).observe(seconds)
        await self.publish(result)

    async def upload_new_files(self, hook: HookSpec, output_dir: Path) -> None:
        """Upload every file under output_dir not uploaded yet (skips .pid files), each with
        the kind its plugin declares."""
        plugin = hook.plugin
        config = load_plugin_config(hook.path.parent)
        for path, rel, size in await asyncio.to_thread(_list_files, output_dir):
            if path in self.uploaded:
                continue
            if size == 0 and rel.endswith(".log"):
                self.uploaded.add(path)
                continue
            key = artifact_key(
                self.cfg.s3_prefix, self.job.link_id, self.job.snapshot_id, plugin, rel
            )
            facts = self.files.get((plugin, rel))
            ctype = (facts and facts.content_type) or content_type(rel)
            size, digest = await self.store.put_file(key, path, ctype)
            kind = (facts and facts.kind) or config.artifact_kind(rel)
            ARTIFACT_BYTES.labels(self.cfg.service, kind).inc(size)
            self.uploaded.add(path)
            self.local[key] = path
            artifact = ArtifactRecord(
                plugin=plugin,
                kind=kind,
                path=rel,
                s3_key=key,
                content_type=ctype,
                bytes=size,
                sha256=digest,
                truncated=bool(facts and facts.truncated),
            )
            self.artifacts.append(artifact)
            await self.publish(artifact)

    async def store_evidence(self, results: dict[str, ArchiveResultRecord], out_dir: Path) -> None:
        """After the last hook: the capture's manifest and WACZ, stored and reported (the
        writer asks for their timestamps); raises StorageError/BusError like any upload."""
        cfg, job = self.cfg, self.job
        if not cfg.evidence:
            return
        builder = EvidenceBuilder(self.store, cfg.s3_prefix, job, out_dir, self.local)
        stored, report = await builder.build(
            self.artifacts,
            results,
            software_of(cfg.service, cfg.worker_id, cfg.binaries),
            capture_settings(cfg.hook_env, self.hooks),
            self.final_url,
            self.title,
            self.report_ids(),
            wacz=cfg.wacz,
        )
        for artifact in stored:
            self.artifacts.append(artifact)
            ARTIFACT_BYTES.labels(cfg.service, artifact.kind).inc(artifact.bytes)
            await self.publish(artifact)
        if report is not None:
            await bus.publish(self.js, CAPTURE_EVIDENCE, report)

    async def upload_meta(self, results: dict[str, ArchiveResultRecord]) -> None:
        """Write the snapshot's meta.json next to its artifacts."""
        meta = {
            "snapshot_id": self.job.snapshot_id,
            "link_id": self.job.link_id,
            "url": self.job.url,
            "attempt": self.job.attempt,
            "worker": self.cfg.worker_id,
            "service": self.cfg.service,
            "finished_at": datetime.now(UTC).isoformat(),
            "results": {
                k: v.model_dump(mode="json", exclude_none=True) for k, v in results.items()
            },
            "artifacts": [a.model_dump(mode="json") for a in self.artifacts],
        }
        key = meta_key(self.cfg.s3_prefix, self.job.link_id, self.job.snapshot_id, self.cfg.service)
        await self.store.put_bytes(key, json.dumps(meta, indent=1).encode(), "application/json")


def select_hooks(cfg: WorkerConfig, job: CaptureJob) -> list[HookSpec]:
    """The hooks this worker runs for the job (discovered once, passed to the runner): its
    plugin set, narrowed to job.hooks plus the hooks related to those by `reads` (a retried
    fetch re-runs what reads it, and a retried reader gets its sources again)."""
    hooks = discover_hooks(cfg.plugins_dirs, "Snapshot", enabled_env=cfg.hook_env, url=job.url)
    if job.hooks is not None:
        chosen = {h.key for h in discover_hooks(cfg.plugins_dirs, "Snapshot", only=job.hooks)}
        hooks = with_related(hooks, chosen, plugin_reads(cfg.plugins_dirs))
    return [
        h
        for h in hooks
        if (cfg.only_plugins is None or h.plugin in cfg.only_plugins)
        and h.plugin not in cfg.skip_plugins
    ]


def _list_files(output_dir: Path) -> list[tuple[Path, str, int]]:
    """(path, relative path, size) of every file under output_dir except .pid files."""
    if not output_dir.exists():
        return []
    return [
        (p, p.relative_to(output_dir).as_posix(), p.stat().st_size)
        for p in sorted(output_dir.rglob("*"))
        if p.is_file() and p.suffix != ".pid"
    ]


async def process(
    cfg: WorkerConfig, js: JetStreamContext, store: ObjectStore, msg: Msg, job: CaptureJob
) -> None:
    """Handle one accepted job message to its ack or nak: run its hooks, report the attempt
    done (ack), or have it redelivered later when S3 or NATS failed (nak)."""
    run = msg.metadata.num_delivered if msg.metadata else 1
    jr = JobRun(cfg, js, store, job, run)
    out_dir = cfg.scratch_dir / f"{job.snapshot_id}-{job.attempt}-{run}"
    heartbeat = asyncio.create_task(bus.keep_in_progress(msg, cfg.consumer.ack_wait_s / 3))
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        # a run killed mid-upload left parts behind: the retry starts clean
        prefix = snapshot_prefix(cfg.s3_prefix, job.link_id, job.snapshot_id)
        if (run > 1 or job.attempt > 1) and await store.abort_incomplete_uploads(prefix):
            log.info("%s: aborted incomplete uploads of an earlier run", job.snapshot_id)
        results, retry = await run_hooks(cfg, jr, out_dir)
        await report_done(jr, msg, results, retry, out_dir)
    except (StorageError, BusError) as exc:
        await retry_later(cfg, job, msg, exc)
    except asyncio.CancelledError:
        # the worker is stopping: the job goes back at once (its hooks were killed)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(msg.nak(), 2)
        JOBS_DONE.labels(cfg.service, "nak").inc()
        log.info("%s: stopped with the worker; handed back", job.snapshot_id)
        raise
    finally:
        heartbeat.cancel()
        jr.forget_progress()
        JOB_SECONDS.labels(cfg.service).observe(loop.time() - started)
        shutil.rmtree(out_dir, ignore_errors=True)


async def accept(cfg: WorkerConfig, msg: Msg) -> CaptureJob | None:
    """The job of a message; a message that violates the model is terminated (None)."""
    try:
        return CaptureJob.model_validate_json(msg.data)
    except ValidationError as exc:
        log.error("terminating invalid job message: %s; data=%r", exc, msg.data[:200])
        await msg.term()
        JOBS_DONE.labels(cfg.service, "invalid").inc()
        return None


async def run_hooks(
    cfg: WorkerConfig, jr: JobRun, out_dir: Path
) -> tuple[dict[str, ArchiveResultRecord], list[str]]:
    """Run the job's hooks (their records stream out and their files upload as each hook
    ends): every hook's final result by key, and the keys of the hooks to retry."""
    job = jr.job
    hooks = select_hooks(cfg, job)
    jr.talks_to_host(hooks)
    if not jr.host_hooks:
        await jr.release_host()
    if not hooks:
        return {}, []
    session = cfg.snapshot_session(out_dir) if cfg.snapshot_session else nullcontext({})
    async with session as extra_env:
        spec = SnapshotSpec(
            snapshot_id=job.snapshot_id,
            url=job.url,
            out_dir=out_dir,
            plugins_dirs=cfg.plugins_dirs,
            env={**cfg.hook_env, **extra_env},
            hooks=hooks,
            attempt=job.attempt,
            max_attempts=job.max_attempts,
            binaries=cfg.binaries,
            limits=cfg.limits,
        )
        outcome = await run_snapshot(spec, jr)
    results = {h.hook.key: h.result for h in outcome.hooks}
    return results, sorted(h.hook.key for h in outcome.to_retry)


async def report_done(
    jr: JobRun,
    msg: Msg,
    results: dict[str, ArchiveResultRecord],
    retry: list[str],
    out_dir: Path,
) -> None:
    """Store the evidence and meta.json, publish the attempt's CaptureDone, then ack the job
    (raises StorageError/BusError when any of it failed, uploads during the hooks included)."""
    cfg, job = jr.cfg, jr.job
    if jr.storage_error is not None:
        raise jr.storage_error
    await jr.store_evidence(results, out_dir)
    await jr.upload_meta(results)
    done = CaptureDone(
        **jr.report_ids(),
        records=jr.seq,
        retry_hooks=retry,
    )
    await bus.publish(jr.js, CAPTURE_DONE, done)
    await msg.ack_sync()
    JOBS_DONE.labels(cfg.service, "retry" if retry else "succeeded").inc()
    log.info("%s %s done: %d records, retry %s", job.snapshot_id, job.url, jr.seq, retry)


async def retry_later(cfg: WorkerConfig, job: CaptureJob, msg: Msg, exc: Exception) -> None:
    """S3 or NATS failed: nak with a delay so the job is redelivered (nothing is lost)."""
    log.warning(
        "%s: job %d will be retried in %.0fs: %s", cfg.service, job.job_id, cfg.nak_delay_s, exc
    )
    JOBS_DONE.labels(cfg.service, "nak").inc()
    await nak_later(msg, cfg.nak_delay_s)


async def defer(cfg: WorkerConfig, job: CaptureJob, msg: Msg, host: str) -> None:
    """A job of a host whose job here is long: nak it with a delay (JetStream redelivers it;
    the slot goes to another host's job meanwhile)."""
    log.info(
        "%s: job %d deferred %.0fs: a job of %s is still running here",
        cfg.service, job.job_id, cfg.long_job_s, host,
    )  # fmt: skip
    JOBS_DONE.labels(cfg.service, "deferred").inc()
    await nak_later(msg, cfg.long_job_s)


async def nak_later(msg: Msg, delay: float) -> None:
    """Have JetStream redeliver the message after `delay` seconds."""
    try:
        await msg.nak(delay=delay)
    except Exception as exc:  # redelivery after ack_wait covers a lost nak
        log.warning("nak failed: %s", exc)


def sweep_stale_scratch(scratch_dir: Path) -> list[Path]:
    """Delete the scratch folders of dead workers (`<service>-<pid>` whose pid is gone):
    what a SIGKILLed worker was downloading must not fill the disk."""
    swept: list[Path] = []
    parent, own = scratch_dir.parent, scratch_dir.name
    if not parent.is_dir():
        return swept
    service = own.rsplit("-", 1)[0]
    for folder in parent.glob(f"{service}-*"):
        pid = folder.name.rsplit("-", 1)[-1]
        if folder.name == own or not pid.isdigit() or processes.exists(int(pid)):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        swept.append(folder)
        log.info("swept scratch folder of dead worker %s", folder.name)
    return swept


async def report_binaries(
    cfg: WorkerConfig, js: JetStreamContext, binaries: list[BinaryRecord]
) -> None:
    """Tell the writer what this machine has (it re-queues hooks that waited for a binary)."""
    machine = socket.gethostname()
    report = WorkerBinaries(
        worker=cfg.worker_id,
        machine=machine,
        detected_at=datetime.now(UTC),
        binaries=[b.model_copy(update={"machine": machine}) for b in binaries],
    )
    try:
        await bus.publish(js, CAPTURE_BINARIES, report)
    except BusError as exc:
        log.warning("could not report binaries: %s", exc)


async def run_worker(
    cfg: WorkerConfig, js: JetStreamContext, store: ObjectStore, stop: asyncio.Event
) -> None:
    """Fetch and process jobs until stop is set: at most cfg.concurrency in the slots, plus
    up to cfg.max_long_jobs set aside after cfg.long_job_s (shared/capture/slots.py)."""
    metrics.initialise(cfg.service)
    await asyncio.to_thread(sweep_stale_scratch, cfg.scratch_dir)
    if cfg.binaries is None:
        cfg.binaries = await asyncio.to_thread(detect_binaries, cfg.plugins_dirs, env=cfg.hook_env)
        for b in cfg.binaries:
            level = logging.INFO if b.status == "succeeded" else logging.WARNING
            log.log(level, "binary %s: %s %s", b.name, b.abspath or "MISSING", b.version or "")
        await report_binaries(cfg, js, cfg.binaries)
    sub = await bus.pull_subscribe(js, cfg.consumer)
    slots = Slots(SlotPolicy(cfg.concurrency, cfg.long_job_s, cfg.max_long_jobs))
    running: set[asyncio.Task[None]] = set()
    while not stop.is_set():
        free = slots.free()
        if free <= 0:
            # woken by a job ending, a job becoming long, or (within a second) a stop
            change = slots.next_change()
            timeout = 1.0 if change is None else min(change, 1.0)
            await asyncio.wait(running, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            continue
        for msg in await bus.fetch(sub, free, timeout=1.0):
            job = await accept(cfg, msg)
            if job is None:
                continue
            host = host_of(job.url)
            if slots.stalled(host):
                await defer(cfg, job, msg, host)
                continue
            task = asyncio.create_task(process(cfg, js, store, msg, job))
            slots.start(task, host)
            running.add(task)
            task.add_done_callback(running.discard)
            task.add_done_callback(slots.end)
    if running:
        _, late = await asyncio.wait(running, timeout=cfg.stop_drain_s)
        if late:
            log.info("stopping: %d job(s) still running after %g s are handed back",
                     len(late), cfg.stop_drain_s)  # fmt: skip
            for task in late:
                task.cancel()
            await asyncio.wait(late)
