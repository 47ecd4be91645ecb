"""A retry re-runs the hooks that read the retried ones (503 then 200 must not leave the
link titled by the 503 page)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from shared.capture.settings import REPO_PLUGINS
from shared.capture.worker import select_hooks
from shared.capture.worker_config import WorkerConfig
from shared.messages import CaptureJob
from shared.subjects import ARCHIVER_JOBS

FETCH = "fetch/on_Snapshot__41_fetch.py"
META = "metadata/on_Snapshot__81_metadata.py"
TEXT = "readable/on_Snapshot__82_readable.py"


def job(hooks: list[str] | None) -> CaptureJob:
    return CaptureJob(
        job_id=1, link_id=1, snapshot_id="s", url="http://x/", attempt=2, hooks=hooks,
        deadline=datetime.now(UTC),
    )  # fmt: skip


def keys(cfg: WorkerConfig, hooks: list[str] | None) -> set[str]:
    return {h.key for h in select_hooks(cfg, job(hooks))}


def test_retrying_fetch_reruns_what_reads_it(tmp_path: Path) -> None:
    cfg = WorkerConfig(
        service="archiver", consumer=ARCHIVER_JOBS, plugins_dirs=[REPO_PLUGINS],
        scratch_dir=tmp_path, s3_prefix="",
    )  # fmt: skip
    assert {FETCH, META, TEXT} <= keys(cfg, [FETCH])
    assert {FETCH, META} <= keys(cfg, [META]), "a reader needs its source"
    everything = keys(cfg, None)
    assert FETCH in everything and META in everything
