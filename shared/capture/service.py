"""The body of a capture-worker service: the archiver and media services differ only here."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable

from shared import cookies
from shared.capture.checker import CheckerConfig, run_checker
from shared.capture.settings import WorkerSettings
from shared.capture.submitter import SubmitConfig, run_submitter
from shared.capture.timestamper import TimestampConfig, run_timestamper
from shared.capture.worker import run_worker
from shared.capture.worker_config import SnapshotSession, WorkerConfig
from shared.health import s3_check
from shared.hooks.config import setting_errors, setting_names
from shared.hooks.discovery import plugin_dirs
from shared.hooks.limits import HookLimits
from shared.lifecycle import ServiceContext
from shared.liveness.check import CheckEnv, Checker
from shared.s3 import ObjectStore
from shared.setting_names import StartReport
from shared.settings import public_env
from shared.subjects import (
    ARCHIVER_JOBS,
    CHECKER_JOBS,
    EXTERNAL_JOBS,
    MEDIA_JOBS,
    TIMESTAMP_JOBS,
)


def plugin_setting_names(s: WorkerSettings) -> set[str]:
    """The settings of every plugin a capture worker runs (`Service.more_setting_names`)."""
    return setting_names(plugin_dirs([s.plugins_dir]).values())


def plugin_setting_problems(s: WorkerSettings) -> StartReport:
    """Each plugin's refused settings (`Service.more_setting_problems`; the worker logs them
    too when it starts, and their hooks fail with E_<PLUGIN>_CONFIG), a COOKIES_DIR that
    gives no capture its cookies (shared.cookies.folder_notes), TSA_URLS without evidence."""
    env = public_env(dict(os.environ))
    errors = setting_errors(plugin_dirs([s.plugins_dir]), env)
    refused = [f"{error} (its hooks fail until it is mended)" for error in errors]
    idle = cookies.folder_notes(os.environ.get("COOKIES_DIR"))
    if s.tsa_urls and not s.evidence_enabled:
        idle.append("TSA_URLS is not asked: EVIDENCE_ENABLED=false makes no manifest to timestamp")
    return StartReport(refused=refused, idle=idle)


def worker_body(
    *, media: bool, snapshot_session: SnapshotSession | None = None
) -> Callable[[ServiceContext[WorkerSettings]], Awaitable[None]]:
    """The service body of the media worker (media=True) or the archiver (media=False, which
    also runs the liveness checks, shared/capture/checker.py, the timestamp jobs and the
    submissions to the public archives, shared/capture/submitter.py); snapshot_session opens
    per-snapshot resources for the hooks (the archiver's page)."""

    async def body(ctx: ServiceContext[WorkerSettings]) -> None:
        s = ctx.settings
        ctx.add_check(s3_check(s))
        service = "media" if media else "archiver"
        cfg = WorkerConfig(
            service=service,
            consumer=(MEDIA_JOBS if media else ARCHIVER_JOBS).with_ack_wait(s.job_ack_wait_seconds),
            plugins_dirs=[s.plugins_dir],
            scratch_dir=s.data_dir / "scratch" / f"{service}-{os.getpid()}",
            s3_prefix=s.s3_prefix,
            concurrency=s.media_concurrency if media else s.archiver_concurrency,
            # media downloads are long by nature: they keep their slot
            long_job_s=0 if media else s.archiver_long_job_seconds,
            max_long_jobs=0 if media else s.archiver_max_long_jobs,
            stop_drain_s=s.worker_stop_drain_seconds,
            only_plugins=s.media_plugins if media else None,
            skip_plugins=() if media else s.media_plugins,
            hook_env=public_env(dict(os.environ)),
            nak_delay_s=s.job_retry_delay_seconds,
            limits=HookLimits(s.hook_memory_limit_mb * 1024 * 1024, s.hook_cpu_limit_seconds),
            snapshot_session=snapshot_session,
            evidence=s.evidence_enabled,
            wacz=s.wacz_enabled,
            warm_hosts=not media,
        )
        async with ObjectStore(s) as store:
            if media:
                await run_worker(cfg, ctx.js, store, ctx.stop)
                return
            stamps = TimestampConfig(
                consumer=TIMESTAMP_JOBS,
                s3_prefix=s.s3_prefix,
                worker_id=cfg.worker_id,
                ca_file=s.tsa_ca_file,
                timeout_s=s.tsa_timeout_seconds,
                nak_delay_s=s.job_retry_delay_seconds,
            )
            checks = CheckerConfig(
                consumer=CHECKER_JOBS.with_ack_wait(s.job_ack_wait_seconds),
                concurrency=s.liveness_concurrency,
                nak_delay_s=s.job_retry_delay_seconds,
            )
            submits = SubmitConfig(
                consumer=EXTERNAL_JOBS,
                worker_id=cfg.worker_id,
                services=s,
                user_agent=s.user_agent,
                nak_delay_s=s.job_retry_delay_seconds,
            )
            checker = Checker(CheckEnv(s.plugins_dir, cfg.hook_env, cfg.worker_id), store)
            await together(
                ctx.stop,
                run_worker(cfg, ctx.js, store, ctx.stop),
                run_timestamper(stamps, ctx.js, store, ctx.stop),
                run_checker(checks, ctx.js, checker, ctx.stop),
                run_submitter(submits, ctx.js, ctx.stop),
            )

    return body


async def together(stop: asyncio.Event, *loops: Awaitable[None]) -> None:
    """Run the loops until stop; when one fails, stop the others (each ends its own way, the
    worker draining its jobs) and raise its error: the service exits and its supervisor
    restarts it. (With a bare gather the others ran on after the service had closed its NATS
    connection, a process alive and doing nothing: the chaos run's cluster test.)"""

    async def guarded(loop: Awaitable[None]) -> None:
        try:
            await loop
        except BaseException:
            stop.set()
            raise

    results = await asyncio.gather(*(guarded(c) for c in loops), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
