"""How one capture worker process runs (the archiver's or the media service's)."""

from __future__ import annotations

import os
import socket
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path

from shared.hooks.limits import HookLimits
from shared.hooks.records import BinaryRecord
from shared.subjects import ConsumerSpec

LAST_PAGE_STEP = 7
"""The plugin contract's step 7 ends the snapshot's page (the seed's "Chrome cleanup"): once
every foreground hook of steps 0-7 has ended, the worker ends the snapshot's resources, so
post-processing (step 8 on: metadata, readable) and the uploads run without a browser
context and its renderer held open."""


async def _nothing() -> None:
    return None


@dataclass(frozen=True)
class SnapshotResources:
    """What a snapshot's session gives its hooks."""

    env: Mapping[str, str]
    """Extra env for every hook (the archiver's PAGE_SOCKET)."""
    end: Callable[[], Awaitable[None]] = _nothing
    """Ends them before the session does (after step LAST_PAGE_STEP); ending twice is
    harmless, and the session's exit ends them anyway."""


SnapshotSession = Callable[[Path], AbstractAsyncContextManager[SnapshotResources]]
"""Opens per-snapshot resources for the hooks."""


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
    the hook run with the snapshot folder, yields extra env for every hook and how to end
    them after step LAST_PAGE_STEP."""
    evidence: bool = True
    """EVIDENCE_ENABLED: each capture's manifest and WACZ (shared/capture/evidence_builder.py)."""
    wacz: bool = True
    """WACZ_ENABLED: the WACZ beside the manifest."""
    warm_hosts: bool = True
    """Start the hook hosts with the subscription, so the first capture does not wait for
    them; False: at the first job that runs a Python hook (`shared_host`). The media worker
    waits: its jobs come only for video links and each takes seconds, and its two idle
    hosts are ~90 MB of PSS that an archive without videos never uses."""

    def runs_plugin(self, plugin: str) -> bool:
        """Whether this worker runs the plugin's hooks (`only_plugins`, `skip_plugins`)."""
        return (
            self.only_plugins is None or plugin in self.only_plugins
        ) and plugin not in self.skip_plugins
