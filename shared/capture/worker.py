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
import functools
import logging
import shutil
import socket
from collections.abc import Callable
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path

from nats.aio.msg import Msg
from nats.js import JetStreamContext

from shared import bus, processes
from shared.capture import metrics
from shared.capture.artifacts import snapshot_prefix
from shared.capture.jobrun import JobRun
from shared.capture.metrics import JOB_SECONDS, JOBS_DONE
from shared.capture.slots import SlotPolicy, Slots, host_of
from shared.capture.worker_config import SnapshotResources, WorkerConfig
from shared.errors import BusError, StorageError
from shared.hooks.binary_detection import detect_binaries
from shared.hooks.config import setting_errors
from shared.hooks.discovery import plugin_dirs
from shared.hooks.host import shared_host
from shared.hooks.reads import plugin_reads, with_related
from shared.hooks.records import ArchiveResultRecord, BinaryRecord
from shared.hooks.snapshot_runner import HookSpec, SnapshotSpec, discover_hooks, run_snapshot
from shared.messages import CaptureDone, CaptureJob, WorkerBinaries
from shared.s3 import ObjectStore
from shared.subjects import CAPTURE_BINARIES, CAPTURE_DONE

log = logging.getLogger(__name__)


def select_hooks(cfg: WorkerConfig, job: CaptureJob) -> list[HookSpec]:
    """The hooks this worker runs for the job (discovered once, passed to the runner): its
    plugin set, narrowed to job.hooks plus the hooks related to those by `reads` (a retried
    fetch re-runs what reads it, and a retried reader gets its sources again)."""
    hooks = discover_hooks(cfg.plugins_dirs, "Snapshot", enabled_env=cfg.hook_env, url=job.url)
    if job.hooks is not None:
        chosen = {h.key for h in discover_hooks(cfg.plugins_dirs, "Snapshot", only=job.hooks)}
        hooks = with_related(hooks, chosen, plugin_reads(cfg.plugins_dirs))
    return [h for h in hooks if cfg.runs_plugin(h.plugin)]


async def process(
    cfg: WorkerConfig,
    js: JetStreamContext,
    store: ObjectStore,
    msg: Msg,
    job: CaptureJob,
    on_release: Callable[[], None] = lambda: None,
) -> None:
    """Handle one accepted job message to its ack or nak: run its hooks, report the attempt
    done (ack), or have it redelivered later when S3 or NATS failed (nak). `on_release` is
    called once the job is done with its host (released to the writer, or reported done)."""
    run = msg.metadata.num_delivered if msg.metadata else 1
    jr = JobRun(cfg, js, store, job, run, on_release)
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
        await bus.hand_back(msg)
        JOBS_DONE.labels(cfg.service, "nak").inc()
        log.info("%s: stopped with the worker; handed back", job.snapshot_id)
        raise
    finally:
        heartbeat.cancel()
        jr.forget_progress()
        JOB_SECONDS.labels(cfg.service).observe(loop.time() - started)
        shutil.rmtree(out_dir, ignore_errors=True)


def _ended(slots: Slots, key: object, _: asyncio.Task[None]) -> None:
    slots.end(key)


async def accept(cfg: WorkerConfig, msg: Msg) -> CaptureJob | None:
    """The job of a message; a message that violates the model is terminated (None)."""
    job = await bus.accept(msg, CaptureJob, "job")
    if job is None:
        JOBS_DONE.labels(cfg.service, "invalid").inc()
    return job


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
    session = (
        cfg.snapshot_session(out_dir)
        if cfg.snapshot_session
        else nullcontext(SnapshotResources({}))
    )
    async with session as resources:
        jr.uses_page(hooks, resources.end)
        extra_env = resources.env
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
    jr.on_release()  # the writer may send the host's next job before the ack below returns
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
    await bus.nak_later(msg, cfg.nak_delay_s)


async def defer(cfg: WorkerConfig, job: CaptureJob, msg: Msg, host: str) -> None:
    """A job of a host whose job here is long: nak it with a delay (JetStream redelivers it;
    the slot goes to another host's job meanwhile)."""
    log.info(
        "%s: job %d deferred %.0fs: a job of %s is still running here",
        cfg.service, job.job_id, cfg.long_job_s, host,
    )  # fmt: skip
    JOBS_DONE.labels(cfg.service, "deferred").inc()
    await bus.nak_later(msg, cfg.long_job_s)


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
    dirs = {k: v for k, v in plugin_dirs(cfg.plugins_dirs).items() if cfg.runs_plugin(k)}
    for error in await asyncio.to_thread(setting_errors, dirs, cfg.hook_env):
        log.error("plugin setting refused, its hooks fail with E_<PLUGIN>_CONFIG: %s", error)
    # the hook hosts start now, beside the subscription, not in the first job's time (or
    # at the first Python hook: WorkerConfig.warm_hosts)
    warming = asyncio.create_task(shared_host() if cfg.warm_hosts else asyncio.sleep(0))
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
            key = object()
            task = asyncio.create_task(
                process(cfg, js, store, msg, job, functools.partial(slots.release, key))
            )
            slots.start(key, host)
            running.add(task)
            task.add_done_callback(running.discard)
            task.add_done_callback(functools.partial(_ended, slots, key))
    if running:
        _, late = await asyncio.wait(running, timeout=cfg.stop_drain_s)
        if late:
            log.info("stopping: %d job(s) still running after %g s are handed back",
                     len(late), cfg.stop_drain_s)  # fmt: skip
            for task in late:
                task.cancel()
            await asyncio.wait(late)
    if not warming.done():
        warming.cancel()
