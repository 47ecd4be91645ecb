"""Runs a snapshot's capture hooks. THE PLUGIN CONTRACT (copied verbatim in plugins/README.md):

Layout
  plugins/<plugin>/config.json      JSON Schema of its env settings (defaults, descriptions),
                                    and "x-artifacts": the kinds of its output files, file
                                    pattern -> kind, first match wins ({"headers.json":
                                    "headers", "body*": "raw_response"}); `*.stderr.log` is
                                    `log`, any other file `<plugin>_file`; a hook's File
                                    record naming a kind wins; "reads": [plugins it reads;
                                    "x-platform" stands for every platform plugin];
                                    "x-domains": [registrable domains]: its hooks run only for
                                    links on these (absent: every link); "x-platform": true
                                    for a platform's plugin (its folder's name is the
                                    platform's): its hooks run for its platform's links
                                    (shared/platforms/registry.py), and it gets the settings
                                    and artifact kinds every platform plugin has
                                    (shared/platforms/plugin.json) under its own;
                                    "x-contacts-host": true when its hooks talk to the
                                    link's host (the host's slot is released once every
                                    such hook of the job has ended: keep them before step 5)
  plugins/<plugin>/binaries.jsonl   optional, what it needs, one record a line:
                                    {"type": "Binary", "name": "yt-dlp", "binproviders": "pip,env"}
  plugins/<plugin>/on_Snapshot__NN_description[.bg].ext   the hooks (any executable)
  plugins/<plugin>/tests/           the plugin's own tests

Order
  NN's first digit is the step (0..9); steps run in order; inside a step hooks start in file
  name order. A foreground hook blocks: the next hook starts when it has ended. A `.bg` hook
  starts in its turn and runs on its own timeline (until it exits or its own timeout), never
  blocking a step; the snapshot ends when the last `.bg` hook has ended. Hooks without NN run
  after step 9, with a warning. One ArchiveResult per hook is created `queued` before any runs.
  Step 7 ends the browser's part: once every foreground hook of steps 0-7 has ended, the
  snapshot's page (PAGE_SOCKET, its browser context) is closed; hooks of step 8 on read files.
  Every hook runs whatever happened to the hooks before it, except a hook whose plugin
  "reads" plugins of this run that all ended with no success (not succeeded or partial):
  it is skipped, E_<PLUGIN>_DEPENDENCY, no retry_at. A retry that re-runs some hooks also
  re-runs the hooks reading them and the hooks they read (shared/hooks/reads.py).

Input
  argv:  --url=<url> --snapshot-id=<id> --timeout=<seconds> --plugins=<a,b,...> [extra flags]
  env:   the worker's env, with the plugin's config.json settings resolved over it: each
         property is read from the env var of its name, else from its "x-fallback" var, else
         its "default"; validated against the schema (a bad value fails the hook with
         E_<PLUGIN>_CONFIG, not retried). Booleans arrive as true/false, lists/objects as JSON.
         <PLUGIN>_TIMEOUT (seconds) is always set: env, else TIMEOUT, else the default, else 60.
         <PLUGIN>_ENABLED=false switches a plugin off (its hooks are not discovered at all).
         <NAME>_BINARY holds the path of each binary in binaries.jsonl (yt-dlp -> YT_DLP_BINARY).
         PATH includes the venv's bin folder.
  cwd:   out_dir/<plugin>/ (created for it): write outputs there; `..` holds other plugins'.
  stdin: /dev/null.
  Python hooks (.py) run with the worker's venv interpreter (usually forked from a pre-warmed
  host: same process semantics), so `from shared.hooks.records import emit` works; other
  hooks are exec'd by their shebang and must be executable.

Output
  stdout: JSONL, one record per line (shared/hooks/records.py: ArchiveResult, Snapshot, Tag,
          Metadata, Text, Progress, Media, Post, Binary, Artifact, File), streamed to the
          archiver as each line arrives. A File record states facts about one of the
          hook's files (kind, content_type, truncated: true for a file holding only the start
          of its content); the worker puts them on that file's Artifact record.
          Lines that are not valid records are logged and ignored. At most 16 MiB is read;
          beyond that output is discarded (the hook keeps running). Lines over 4 MiB are dropped.
  stderr: human logs, kept (first 16 MiB) as `<hook file name>.stderr.log` in the cwd; an
          empty one is deleted. The archiver uploads it with the hook's other files.
  files:  whatever the hook writes in its cwd. Delete your own temporary files.
  An ArchiveResult a hook prints is its claim (status, output_str, error_code, and
  retry_after_s: the seconds the site asked to wait, its Retry-After on a 429 or 503, which the
  fetch and navigate hooks read), not streamed:
  the runner fills plugin, hook, exit_code, timings, attempt and retry_at, and reports the
  final record, which carries the last claim. A hook's ArchiveResult is reported `started`
  once its process has run 0.5 s (STARTED_AFTER); a quicker hook's start is told by its
  final record's started_at alone.

Exit status -> final ArchiveResult
  exit 0, printed {"type": "ArchiveResult", "status": "succeeded"}  succeeded
  exit 0, printed {"type": "ArchiveResult", "status": "partial"}    partial: something kept, not
      all (error_code says why, e.g. E_FETCH_TOO_LARGE); never retried
  exit 0, printed {"type": "ArchiveResult", "status": "failed"}     failed (retried by its code)
  exit 0, printed {"type": "ArchiveResult", "status": "skipped"}    skipped (not applicable)
  exit 0, no ArchiveResult printed                                succeeded (exit 0 means done)
  exit != 0, or killed by a signal                                failed, hard: the hook's
      error_code is kept, else E_<PLUGIN>_FAILED; records printed before stay.
  Retries: a failed result's error_code alone decides (shared/hooks/error_codes.py, the one
      table), whatever the exit code: when its kind is retried, retry_at is set from the
      backoff 5m, 30m, 2h, 12h, 12h ... (shared/hooks/retry.py), or later when the claim's
      retry_after_s asks for longer (kept up to a day), until the job's max_attempts
      (MAX_ATTEMPTS, default 5) are used; otherwise none. A code the table does not know
      (none in the product) is retried only after a hard failure. Hooks print the code the
      table knows (E_NAVIGATE_HTTP_429: retried, the domain backs off; E_REDDIT_HTTP_410:
      final) and by convention exit 1 when it is retried, which decides nothing.
  stopped by its memory or CPU-time limit                         failed, E_<PLUGIN>_RESOURCE_LIMIT,
      no retry_at: killed by SIGXCPU, by a SIGKILL the runner did not send, or ended with a
      failed allocation as its last stderr line (Python's MemoryError, std::bad_alloc, ...)
  still running at <PLUGIN>_TIMEOUT                               failed, hard, E_<PLUGIN>_TIMEOUT
  cannot be started (not executable, bad shebang)                 failed, hard, E_<PLUGIN>_SPAWN
  a binary named in binaries.jsonl is missing                     skipped, E_BINARY_MISSING: not
      run, no retry_at; the worker re-queues it once detect_binaries() finds the binary.
  The last ArchiveResult printed wins; a printed "queued"/"started" status counts as none.

Processes and signals
  Each hook runs under RLIMIT_DATA (HOOK_MEMORY_LIMIT_MB, default 512 MiB; <PLUGIN>_MEMORY_LIMIT_MB
  in its env wins) and RLIMIT_CPU (HOOK_CPU_LIMIT_SECONDS, else its timeout), set in the child
  before the hook runs and inherited by what it starts (shared/hooks/limits.py).
  Each hook leads its own session and process group. At its timeout the group gets SIGTERM
  (finish quickly, exit), then SIGKILL after the grace (60 s by default). When the hook
  exits, processes left in its group get SIGTERM (SIGKILL after the grace). A process meant
  to outlive its hook (a daemon) must leave the group (setsid / double fork), close stdout
  and stderr, and write its PID to a `*.pid` file in the cwd: when the snapshot ends, every
  `out_dir/*/*.pid` process started during the snapshot gets SIGTERM, then SIGKILL, and the
  `.pid` files are deleted. Nothing outlives the snapshot.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from shared import processes
from shared.hooks import reaping
from shared.hooks.discovery import HookSpec, discover_hooks
from shared.hooks.hook_context import STARTED_AFTER, HookObserver, HookOutcome, RunContext
from shared.hooks.hook_execution import HookRun
from shared.hooks.host import shared_host
from shared.hooks.limits import HookLimits
from shared.hooks.records import BinaryRecord, SnapshotStatus
from shared.hooks.retry import MAX_ATTEMPTS
from shared.hooks.states import IllegalTransition, SnapshotMachine

__all__ = [
    "HookObserver",
    "HookOutcome",
    "HookSpec",
    "SnapshotOutcome",
    "SnapshotRun",
    "SnapshotSpec",
    "discover_hooks",
    "run_snapshot",
]

log = logging.getLogger(__name__)


@dataclass
class SnapshotSpec:
    """What to capture and where."""

    snapshot_id: str
    """Snapshot id, passed as --snapshot-id."""
    url: str
    """The link, passed as --url."""
    out_dir: Path
    """Snapshot folder; out_dir/<plugin>/ is each hook's cwd."""
    plugins_dirs: Sequence[Path]
    """Folders holding plugin folders; a plugin name found earlier wins."""
    env: Mapping[str, str]
    """Base env (os.environ-like); each plugin's config.json defaults are layered under it."""
    only_hooks: Collection[str] | None = None
    """Run only these (plugin names, hook file names or `<plugin>/<file>`); None = all."""
    hooks: Sequence[HookSpec] | None = None
    """The hooks to run, already discovered (a worker's plugin selection); None = discover
    them under plugins_dirs (narrowed by only_hooks)."""
    extra_args: Sequence[str] = ()
    """Extra CLI flags for every hook."""
    attempt: int = 1
    """1-based attempt number (retries pass 2, 3, ...): picks the retry backoff."""
    max_attempts: int = MAX_ATTEMPTS
    """Attempts in all (the writer's MAX_ATTEMPTS): a hard failure of the last sets no retry_at."""
    binaries: Sequence[BinaryRecord] | None = None
    """detect_binaries() result from worker start; None = look up with shutil.which now."""
    limits: HookLimits = field(default_factory=HookLimits)
    """Memory and CPU-time limits of every hook process (see limits.py)."""
    started_after: float = STARTED_AFTER
    """Seconds a hook runs before its `started` ArchiveResult is reported (0: at once)."""


@dataclass(frozen=True)
class SnapshotOutcome:
    """How a snapshot run ended: every hook's final ArchiveResult."""

    snapshot_id: str
    """The snapshot."""
    status: SnapshotStatus
    """`sealed` once every hook (background ones too) has ended and cleanup ran."""
    hooks: list[HookOutcome]
    """One per discovered hook, in run order."""
    started_at: datetime
    """When the run started."""
    ended_at: datetime
    """When it sealed."""

    @property
    def to_retry(self) -> list[HookOutcome]:
        """Hard failures with attempts left (their results carry retry_at)."""
        return [h for h in self.hooks if h.retry]

    def result(self, key: str) -> HookOutcome:
        """A hook's outcome by `<plugin>/<file name>`, file name or plugin (its first hook)."""
        for h in self.hooks:
            if key in (h.hook.key, h.hook.name, h.hook.plugin):
                return h
        raise KeyError(key)


class SnapshotRun:
    """A Snapshot's machine: queued -> started (run) -> sealed (after cleanup)."""

    def __init__(self, spec: SnapshotSpec, observer: HookObserver, kill_grace: float) -> None:
        self.spec = spec
        self.machine = SnapshotMachine()
        self.kill_grace = kill_grace
        self.observer = observer
        self.runs: list[HookRun] = []
        self._reapers: set[asyncio.Task[object]] = set()
        self._since = processes.clock()
        self._started_at = datetime.now(UTC)

    def has_running_background_hooks(self) -> bool:
        """True while a `.bg` hook's process is still running: the snapshot cannot seal."""
        return any(r.hook.background and r.running for r in self.runs)

    async def run(self, *, python_host: bool = True) -> SnapshotOutcome:
        """Queue one ArchiveResult per hook, run steps 0..9 then unnumbered, wait, clean, seal."""
        spec = self.spec
        self.machine.to("started")
        hooks = (
            list(spec.hooks)
            if spec.hooks is not None
            else discover_hooks(
                spec.plugins_dirs,
                "Snapshot",
                only=spec.only_hooks,
                enabled_env=spec.env,
                url=spec.url,
            )
        )
        host = await shared_host() if python_host and any(h.is_python for h in hooks) else None
        ctx = RunContext(
            snapshot_id=spec.snapshot_id,
            url=spec.url,
            out_dir=spec.out_dir,
            env=spec.env,
            extra_args=spec.extra_args,
            plugins=sorted({h.plugin for h in hooks}),
            attempt=spec.attempt,
            observer=self.observer,
            kill_grace=self.kill_grace,
            host=host,
            binaries=None if spec.binaries is None else {b.name: b for b in spec.binaries},
            background_tasks=self._reapers,
            max_attempts=spec.max_attempts,
            limits=spec.limits,
            started_after=spec.started_after,
        )
        self.runs = [HookRun(h, ctx) for h in hooks]
        for r in self.runs:
            await self.observer.record(r.hook, r.result)
        try:
            async with asyncio.TaskGroup() as group:
                for r in self.runs:
                    if r.hook.background:
                        group.create_task(r.run(), name=r.hook.key)
                        await r.launched.wait()  # started in its turn, before the next hook
                    else:
                        await r.run()
        except BaseExceptionGroup as eg:
            raise eg.exceptions[0] from eg
        finally:
            await self.cleanup()
        self.seal()
        return SnapshotOutcome(
            spec.snapshot_id,
            self.machine.status,
            [r.outcome for r in self.runs if r.outcome is not None],
            self._started_at,
            datetime.now(UTC),
        )

    async def cleanup(self) -> None:
        """Stop leftovers: every hook's process group, and `*.pid` processes started during
        the snapshot (all at once, one grace); then delete the `.pid` files."""
        targets = reaping.pid_file_targets(self.spec.out_dir, self._since)
        if targets:
            log.info("snapshot %s: sweeping .pid %s", self.spec.snapshot_id, targets)
        await asyncio.gather(
            *(r.cleanup() for r in self.runs),
            reaping.terminate(targets.values(), [], self.kill_grace),
            *self._reapers,
        )
        for path in self.spec.out_dir.glob("*/*.pid"):
            path.unlink(missing_ok=True)

    def seal(self) -> None:
        """started -> sealed; raises while a background hook still runs."""
        if self.has_running_background_hooks():
            raise IllegalTransition("a background hook is still running: cannot seal")
        self.machine.to("sealed")


async def run_snapshot(
    spec: SnapshotSpec,
    observer: HookObserver,
    *,
    kill_grace: float = 60.0,
    python_host: bool = True,
) -> SnapshotOutcome:
    """Run every hook of a snapshot; returns when all (`.bg` too) have ended and cleanup ran.

    `python_host=False` execs Python hooks with a fresh interpreter instead of forking them
    from the pre-warmed host. If the observer raises, the hooks are stopped and it re-raises.
    """
    return await SnapshotRun(spec, observer, kill_grace).run(python_host=python_host)
