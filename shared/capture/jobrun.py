"""One run of one job attempt: its records streamed to the writer, each hook's files uploaded
as the hook ends, the host released after the last hook that talks to it, then the capture's
evidence and meta.json."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nats.js import JetStreamContext

from shared import bus
from shared.capture import metrics
from shared.capture.artifacts import artifact_key, content_type, meta_key, run_prefix
from shared.capture.evidence_builder import EvidenceBuilder, capture_settings, software_of
from shared.capture.metrics import ARTIFACT_BYTES, HOOK_SECONDS, S3_ERRORS
from shared.capture.worker_config import LAST_PAGE_STEP, WorkerConfig
from shared.errors import BusError, StorageError
from shared.hooks.config import load_plugin_config
from shared.hooks.records import (
    ArchiveResultRecord,
    ArtifactRecord,
    FileRecord,
    HookRecord,
    MetadataRecord,
    ProgressRecord,
    SnapshotRecord,
)
from shared.hooks.snapshot_runner import HookSpec
from shared.messages import CaptureEvent, CaptureJob, HostReleased
from shared.s3 import ObjectStore
from shared.subjects import CAPTURE_EVIDENCE, CAPTURE_RELEASED, CAPTURE_RESULT

log = logging.getLogger(__name__)

RECORDS_A_MESSAGE = 100
"""Records sent in one CaptureEvent at most (a hook's Artifact records with its final result,
the queued results of a snapshot's hooks)."""


class JobRun:
    """Streams one job attempt's records to the writer and uploads each hook's files."""

    def __init__(
        self,
        cfg: WorkerConfig,
        js: JetStreamContext,
        store: ObjectStore,
        job: CaptureJob,
        run: int,
        on_release: Callable[[], None] = lambda: None,
    ) -> None:
        self.cfg, self.js, self.store, self.job, self.run = cfg, js, store, job, run
        self.on_release = on_release
        """Called when the run is done with the link's host (the worker's slots: a job of the
        host fetched from now on is not held back by this one)."""
        self.folder = run_prefix(cfg.s3_prefix, job.link_id, job.snapshot_id, job.attempt, run)
        """Where this run's files go: a folder of its own unless it is the job's first."""
        self.seq = 0
        self.queued: list[HookRecord] = []
        """Queued results not sent yet: they go with the run's next record, in its message."""
        self.uploaded: set[Path] = set()
        self.artifacts: list[ArtifactRecord] = []
        self.files: dict[tuple[str, str], FileRecord] = {}
        """What hooks said about their files, by (plugin, path): used at upload."""
        self.storage_error: StorageError | None = None
        self.downloaded: dict[str, int] = {}
        self.host_hooks: set[str] = set()
        """The job's hooks that talk to the link's host (`x-contacts-host`) still running."""
        self.released = False
        self.page_hooks: set[str] = set()
        """The job's foreground hooks of steps 0..LAST_PAGE_STEP still to end."""
        self.end_page: Callable[[], Awaitable[None]] | None = None
        """Ends the snapshot's page once they have (set by uses_page)."""
        self.hooks: list[HookSpec] = []
        self.local: dict[str, Path] = {}
        """This run's uploaded files by key (the evidence packages its WARCs from them)."""
        self.final_url: str | None = None
        self.title: str | None = None
        """The page's title for the evidence: a Snapshot record's, else the metadata's."""
        self.metadata_title: str | None = None

    def talks_to_host(self, hooks: Sequence[HookSpec]) -> None:
        """Remember which of the job's hooks contact the link's host."""
        self.hooks = list(hooks)
        self.host_hooks = {h.key for h in hooks if load_plugin_config(h.path.parent).contacts_host}

    def uses_page(self, hooks: Sequence[HookSpec], end: Callable[[], Awaitable[None]]) -> None:
        """Remember the hooks that may use the snapshot's page (foreground, steps 0..7) and
        how to end it after the last of them."""
        self.page_hooks = {
            h.key for h in hooks
            if not h.background and h.step is not None and h.step <= LAST_PAGE_STEP
        }  # fmt: skip
        self.end_page = end

    async def release_host(self) -> None:
        """Tell the writer this attempt is done with the host (once): its domain slot goes
        to the next capture of the host while this one post-processes and uploads. A lost
        release only costs time: the slot is freed when the attempt is done, as without."""
        if self.released:
            return
        self.released = True
        self.on_release()
        try:
            await bus.publish(self.js, CAPTURE_RELEASED, HostReleased(**self.report_ids()))
        except BusError as exc:
            log.warning("%s: host release not sent: %s", self.job.snapshot_id, exc)

    def report_ids(self) -> dict[str, Any]:
        """The fields of every report on this run of the attempt (AttemptReport)."""
        job = self.job
        return {"job_id": job.job_id, "link_id": job.link_id, "snapshot_id": job.snapshot_id,
                "attempt": job.attempt, "run": self.run, "worker": self.cfg.worker_id}  # fmt: skip

    async def publish(self, *records: HookRecord) -> None:
        """Publish records as CaptureEvents, after the queued results not sent yet: one
        message for up to RECORDS_A_MESSAGE of them, applied in order (raises BusError)."""
        pending = [*self.queued, *records]
        self.queued = []
        events = []
        for at in range(0, len(pending), RECORDS_A_MESSAGE):
            first, *more = pending[at : at + RECORDS_A_MESSAGE]
            events.append(
                CaptureEvent(
                    job_id=self.job.job_id,
                    link_id=self.job.link_id,
                    snapshot_id=self.job.snapshot_id,
                    attempt=self.job.attempt,
                    run=self.run,
                    seq=self.seq,
                    worker=self.cfg.worker_id,
                    record=first,
                    more=more,
                )
            )
            self.seq += 1  # numbered before any is sent: a concurrent publish comes after
        for event in events:
            await bus.publish(self.js, CAPTURE_RESULT, event)

    async def record(self, hook: HookSpec, record: HookRecord) -> None:
        """HookObserver: forward a record as it streams out of the hook (a File record is
        kept for the upload of its file instead; a Progress record also feeds the metrics).
        The queued results, which all come before any hook runs, go in one message with
        the next record."""
        if isinstance(record, ArchiveResultRecord) and record.status == "queued":
            self.queued.append(record)
            return
        if isinstance(record, ProgressRecord):
            self.progress(hook.plugin, record)
        if isinstance(record, FileRecord):
            self.files[(hook.plugin, record.path)] = record
            return
        if isinstance(record, SnapshotRecord):
            self.final_url = record.final_url or self.final_url
            self.title = record.title or self.title
        if isinstance(record, MetadataRecord):
            self.metadata_title = record.title or self.metadata_title
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
        hook's new output files, then send their Artifact records and its final result
        together."""
        if hook.key in self.host_hooks:
            self.host_hooks.discard(hook.key)
            if not self.host_hooks:
                await self.release_host()
        if hook.key in self.page_hooks:
            self.page_hooks.discard(hook.key)
            if not self.page_hooks and self.end_page is not None:
                try:  # step 7's cleanup: the page and its context
                    await self.end_page()
                except Exception as exc:  # the session's own exit ends them again
                    log.warning("%s: the page did not close after step 7: %s",
                                self.job.snapshot_id, exc)  # fmt: skip
        uploaded: list[ArtifactRecord] = []
        try:
            await self.upload_new_files(hook, output_dir, uploaded)
        except StorageError as exc:
            self.storage_error = exc
            S3_ERRORS.labels(self.cfg.service, "upload").inc()
            log.warning("%s: upload failed: %s", self.job.snapshot_id, exc)
        if result.started_at is not None and result.ended_at is not None:
            seconds = (result.ended_at - result.started_at).total_seconds()
            HOOK_SECONDS.labels(self.cfg.service, hook.plugin, result.status).observe(seconds)
        await self.publish(*uploaded, result)

    async def upload_new_files(
        self, hook: HookSpec, output_dir: Path, uploaded: list[ArtifactRecord]
    ) -> None:
        """Upload every file under output_dir not uploaded yet (skips .pid files), each with
        the kind its plugin declares; appends each one's Artifact record to `uploaded` as
        it is stored (those stored before a StorageError are there too)."""
        if _is_empty(output_dir):  # the hook kept nothing: no thread to list it
            return
        plugin = hook.plugin
        config = load_plugin_config(hook.path.parent)
        for path, rel, size in await asyncio.to_thread(_list_files, output_dir):
            if path in self.uploaded:
                continue
            if size == 0 and rel.endswith(".log"):
                self.uploaded.add(path)
                continue
            key = artifact_key(self.folder, plugin, rel)
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
            uploaded.append(artifact)

    async def store_evidence(self, results: dict[str, ArchiveResultRecord], out_dir: Path) -> None:
        """After the last hook: the capture's manifest and WACZ, stored and reported (the
        writer asks for their timestamps); raises StorageError/BusError like any upload."""
        cfg, job = self.cfg, self.job
        if not cfg.evidence:
            return
        builder = EvidenceBuilder(self.store, cfg.s3_prefix, job, out_dir, self.local)
        manifest = builder.manifest(
            self.artifacts,
            results,
            software_of(cfg.service, cfg.worker_id, cfg.binaries),
            capture_settings(cfg.hook_env, self.hooks),
            self.final_url,
            self.title or self.metadata_title,
        )
        if manifest is None:  # the snapshot kept no file at all
            return
        stored, report = await builder.build(manifest, self.report_ids(), wacz=cfg.wacz)
        for artifact in stored:
            self.artifacts.append(artifact)
            ARTIFACT_BYTES.labels(cfg.service, artifact.kind).inc(artifact.bytes)
        if stored:
            await self.publish(*stored)
        await bus.publish(self.js, CAPTURE_EVIDENCE, report)

    async def upload_meta(self, results: dict[str, ArchiveResultRecord]) -> None:
        """Write the run's meta.json next to its artifacts."""
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
        key = meta_key(self.folder, self.cfg.service)
        await self.store.put_bytes(key, json.dumps(meta, indent=1).encode(), "application/json")


def _is_empty(folder: Path) -> bool:
    """True when the folder holds nothing (or is not there); reads one entry at most."""
    try:
        with os.scandir(folder) as entries:
            return next(entries, None) is None
    except FileNotFoundError:
        return True


def _list_files(output_dir: Path) -> list[tuple[Path, str, int]]:
    """(path, relative path, size) of every file under output_dir except .pid files."""
    if not output_dir.exists():
        return []
    return [
        (p, p.relative_to(output_dir).as_posix(), p.stat().st_size)
        for p in sorted(output_dir.rglob("*"))
        if p.is_file() and p.suffix != ".pid"
    ]
