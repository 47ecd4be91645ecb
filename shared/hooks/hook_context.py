"""What the hooks of one snapshot's run share: the observer they report to, the context they
run in, and how each ended."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from shared.hooks.discovery import HookSpec
from shared.hooks.host import HostPool
from shared.hooks.limits import HookLimits
from shared.hooks.records import ArchiveResultRecord, BinaryRecord, HookRecord
from shared.hooks.retry import MAX_ATTEMPTS

STARTED_AFTER = 0.5
"""Seconds a hook's process runs before its `started` ArchiveResult is reported: a quicker
hook's start is told by its final result alone (one record a hook fewer to send and apply)."""


class HookObserver(Protocol):
    """What the runner reports to while a snapshot runs (the archiver implements it).

    Per hook: `record(queued ArchiveResult)` for every hook before any runs;
    `record(...)` for each record the hook prints, as it arrives, except its ArchiveResults
    (its claims: the final result carries the last one); `record(started ArchiveResult)`
    once the hook's process has run for `started_after` seconds (a hook that ends sooner,
    or is skipped before starting, has none: its final result carries `started_at`);
    finally `hook_finished(final ArchiveResult)`, exactly once, which is NOT repeated through
    `record()`. Calls are awaited: a slow observer slows the hook's stdout (backpressure),
    never loses records. If a call raises, the snapshot's hooks are stopped and the error
    propagates out of run_snapshot.
    """

    async def record(self, hook: HookSpec, record: HookRecord) -> None:
        """A record, as it arrives: queued/started ArchiveResults and the hook's own."""

    async def hook_finished(
        self, hook: HookSpec, result: ArchiveResultRecord, output_dir: Path
    ) -> None:
        """The hook's final ArchiveResult; its files (and stderr log) are in `output_dir`."""


@dataclass(frozen=True)
class HookOutcome:
    """How one hook ended."""

    hook: HookSpec
    """The hook."""
    result: ArchiveResultRecord
    """Final ArchiveResult (status succeeded | failed | skipped)."""
    output_dir: Path
    """The hook's working dir, `out_dir/<plugin>/`."""
    hard_failure: bool = False
    """Non-zero exit, timeout or spawn error (as opposed to a reported, soft failure)."""

    @property
    def retry(self) -> bool:
        """True when the hook should run again later (hard failure with attempts left)."""
        return self.result.retry_at is not None


@dataclass
class RunContext:
    """What every hook of one snapshot shares."""

    snapshot_id: str
    url: str
    out_dir: Path
    env: Mapping[str, str]
    extra_args: Sequence[str]
    plugins: Sequence[str]
    attempt: int
    observer: HookObserver
    kill_grace: float
    host: HostPool | None
    binaries: Mapping[str, BinaryRecord] | None
    background_tasks: set[asyncio.Task[object]] = field(default_factory=set)
    max_attempts: int = MAX_ATTEMPTS
    """Attempts in all (the writer's MAX_ATTEMPTS): the last one sets no retry_at."""
    limits: HookLimits = field(default_factory=HookLimits)
    """Memory and CPU-time limits of each hook process."""
    started_after: float = STARTED_AFTER
    """Seconds a hook runs before its `started` result is reported (0: at once)."""
    finished: dict[str, list[ArchiveResultRecord]] = field(default_factory=dict)
    """Final results so far, by plugin (a reader looks up its sources here)."""
