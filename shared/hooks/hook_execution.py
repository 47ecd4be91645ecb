"""One hook's run inside a snapshot: its ArchiveResult machine, process and record stream."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from shared.errors import ArchiverError, ConfigError
from shared.fetching import retry_after as retry_wait
from shared.hooks import limits, reaping
from shared.hooks.binary_detection import binary_env_name, read_binaries, search_path
from shared.hooks.config import env_prefix, load_plugin_config
from shared.hooks.discovery import HookSpec
from shared.hooks.error_codes import BINARY_MISSING, What, code, retries
from shared.hooks.hook_context import HookOutcome, RunContext
from shared.hooks.limits import HookLimits
from shared.hooks.records import (
    KEPT,
    ArchiveResultRecord,
    HookRecord,
    PostRecord,
    SnapshotRecord,
    parse_record,
)
from shared.hooks.retry import next_retry_at
from shared.hooks.spawn import (
    HookProcess,
    OutputStreams,
    StreamStats,
    pump_lines,
    pump_log,
    spawn_exec,
)
from shared.hooks.states import ArchiveResultMachine

log = logging.getLogger(__name__)

LOGGED_BAD_LINES = 3
"""Invalid stdout lines logged per hook; the rest are only counted."""


def _fmt_seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _kill_on_error(task: asyncio.Future[StreamStats], proc: HookProcess) -> None:
    """If reading stdout failed (the observer raised), stop the hook at once."""
    if not task.cancelled() and task.exception() is not None:
        proc.signal(signal.SIGKILL)


def _now() -> datetime:
    return datetime.now(UTC)


class HookRun:
    """One hook's ArchiveResult: queued -> started -> succeeded | failed | skipped."""

    def __init__(self, hook: HookSpec, ctx: RunContext) -> None:
        self.hook, self.ctx = hook, ctx
        self.machine = ArchiveResultMachine()
        self.output_dir = ctx.out_dir / hook.plugin
        self.result = ArchiveResultRecord(
            status="queued", plugin=hook.plugin, hook=hook.name, attempt=ctx.attempt
        )
        self.claim: ArchiveResultRecord | None = None
        self.process: HookProcess | None = None
        self.limits = ctx.limits
        """The limits the process runs under (set when it is spawned)."""
        self.bad_lines = 0
        self.outcome: HookOutcome | None = None
        self.launched = asyncio.Event()
        """Set once the process has started (or the run ended without one)."""

    @property
    def running(self) -> bool:
        """True while the hook's process has started and not ended."""
        return self.machine.status == "started"

    def _error_code(self, what: What) -> str:
        return code(env_prefix(self.hook.plugin), what)

    def _set(self, **fields: object) -> None:
        self.result = self.result.model_copy(update={"status": self.machine.status, **fields})

    async def dispatch(self, record: HookRecord) -> None:
        """The one dispatcher for records a hook prints: fix up by type, then stream on. An
        ArchiveResult is the hook's claim: kept for the final result, which carries it (the
        runner owns the plugin/hook/exit/timing/retry fields), not streamed on."""
        if isinstance(record, ArchiveResultRecord):
            self.claim = record
            return
        if isinstance(record, PostRecord):  # its files are in this plugin's folder
            record = record.model_copy(update={"plugin": self.hook.plugin})
        elif isinstance(record, SnapshotRecord) and record.status is not None:
            log.warning("%s: a hook cannot set the snapshot status; ignored", self.hook.key)
            record = record.model_copy(update={"status": None})
        await self.ctx.observer.record(self.hook, record)

    def _on_junk(self, line: bytes, why: object = "not a JSON object") -> None:
        self.bad_lines += 1
        if self.bad_lines <= LOGGED_BAD_LINES:
            log.warning("%s: ignored stdout line %r: %s", self.hook.key, line[:200], why)

    async def _on_record(self, line: bytes) -> None:
        try:
            record = parse_record(line)
        except ValidationError as e:
            self._on_junk(line, f"{e.error_count()} validation error(s)")
            return
        await self.dispatch(record)

    def _binaries(self, plugin_dir: Path) -> dict[str, str | None]:
        """Each binary the plugin needs -> its path, or None when missing. Uses the worker's
        detection when given (a binary it saw missing stays missing), else looks it up."""
        found: dict[str, str | None] = {}
        for wanted in read_binaries(plugin_dir):
            if self.ctx.binaries is not None:
                known = self.ctx.binaries.get(wanted.name)
                ok = known is not None and known.status == "succeeded"
                found[wanted.name] = known.abspath if ok and known else None
            else:
                found[wanted.name] = shutil.which(wanted.name, path=search_path(self.ctx.env))
        return found

    async def run(self) -> HookOutcome:
        """Run the hook to its end (or skip it) and report the final ArchiveResult."""
        plugin_dir = self.hook.path.parent
        binaries = self._binaries(plugin_dir)
        missing = [name for name, path in binaries.items() if not path]
        if missing:
            self.machine.to("skipped")
            self._set(
                error_code=BINARY_MISSING,
                output_str=f"missing binary: {', '.join(missing)}",
                ended_at=_now(),
            )
            return await self._finish(hard=False)
        blocked = self._blocked_by(plugin_dir)
        if blocked:
            self.machine.to("skipped")
            self._set(
                error_code=self._error_code("DEPENDENCY"),
                output_str=f"nothing to read: {blocked}",
                ended_at=_now(),
            )
            return await self._finish(hard=False)
        self.machine.to("started")
        self._set(started_at=_now())
        try:
            env, timeout = load_plugin_config(plugin_dir).hook_env(self.ctx.env)
        except ConfigError as e:
            self.machine.to("failed")
            self._set(error_code=self._error_code("CONFIG"), output_str=str(e), ended_at=_now())
            return await self._finish(hard=False)
        env["PATH"] = search_path(env)
        for name, path in binaries.items():
            env.setdefault(binary_env_name(name), str(path))
        self.output_dir.mkdir(parents=True, exist_ok=True)
        return await self._supervise(timeout, env)

    def _blocked_by(self, plugin_dir: Path) -> str | None:
        """Why the plugins this one reads left nothing to read in this run (None: go ahead):
        every source that ran here ended without success. Sources not in this run are not
        checked (the hook finds their files or not)."""
        try:
            reads = load_plugin_config(plugin_dir).reads
        except ConfigError:
            return None  # reported when the hook's settings are resolved
        why: list[str] = []
        for source in reads:
            if source == self.hook.plugin or source not in self.ctx.plugins:
                continue
            results = self.ctx.finished.get(source, [])
            if any(r.status in KEPT for r in results):
                return None
            last = results[-1] if results else None
            why.append(
                f"{source} {last.status} ({last.error_code or last.output_str})"
                if last
                else f"{source} has not finished"
            )
        return "; ".join(why) or None

    def _limits(self, env: Mapping[str, str], timeout: float) -> HookLimits:
        """The process limits: `<PLUGIN>_MEMORY_LIMIT_MB` (when the plugin or the operator
        sets it) over HOOK_MEMORY_LIMIT_MB; CPU seconds from the settings, else the timeout."""
        own = env.get(f"{env_prefix(self.hook.plugin)}_MEMORY_LIMIT_MB", "").strip()
        memory = int(float(own) * 1024 * 1024) if own else self.ctx.limits.memory_bytes
        return HookLimits(memory, self.ctx.limits.cpu_seconds or timeout)

    def _argv(self, timeout: float) -> list[str]:
        flags = [
            f"--url={self.ctx.url}",
            f"--snapshot-id={self.ctx.snapshot_id}",
            f"--timeout={_fmt_seconds(timeout)}",
            f"--plugins={','.join(self.ctx.plugins)}",
            *self.ctx.extra_args,
        ]
        return [str(self.hook.path), *flags]

    async def _spawn(
        self, argv: list[str], env: dict[str, str], out: int, err: int, limits: HookLimits
    ) -> HookProcess:
        if self.hook.is_python and self.ctx.host is not None and self.ctx.host.usable:
            try:
                return await self.ctx.host.spawn(argv, self.output_dir, env, out, err, limits)
            except ArchiverError as e:
                log.warning("hook host unusable (%s); exec'ing %s", e, self.hook.key)
        if self.hook.is_python:
            argv = [sys.executable, *argv]
        return await spawn_exec(argv, self.output_dir, env, out, err, limits)

    async def _supervise(self, timeout: float, env: dict[str, str]) -> HookOutcome:
        """Launch the process, pump its output, wait for its exit (or time it out), reap its
        leftovers, collect its output, and conclude its state."""
        launched = await self._launch(timeout, env)
        if isinstance(launched, HookOutcome):
            return launched
        proc, out_r, err_r = launched
        streams = self._pump(proc, out_r, err_r)
        rc, timed_out = await self._wait_for_exit(proc, timeout, streams)
        self._reap_leftovers(proc)
        stderr = await self._collect(streams)
        return await self._conclude(rc, timed_out, timeout, stderr)

    async def _launch(
        self, timeout: float, env: dict[str, str]
    ) -> tuple[HookProcess, int, int] | HookOutcome:
        """Spawn the hook with stdout/stderr pipes: (process, stdout fd, stderr fd), or the
        hard-failure outcome when it cannot be spawned."""
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        error: Exception | None = None
        try:
            self.limits = self._limits(env, timeout)
            self.process = await self._spawn(self._argv(timeout), env, out_w, err_w, self.limits)
        except (OSError, ArchiverError) as e:
            error = e
        except BaseException:
            os.close(out_r)
            os.close(err_r)
            raise
        finally:
            os.close(out_w)
            os.close(err_w)
        if self.process is None or error is not None:
            os.close(out_r)
            os.close(err_r)
            self.machine.to("failed")
            self._set(
                error_code=self._error_code("SPAWN"),
                output_str=str(error),
                ended_at=_now(),
                retry_at=next_retry_at(self.ctx.attempt, max_attempts=self.ctx.max_attempts),
            )
            return await self._finish(hard=True)
        self.launched.set()
        return self.process, out_r, err_r

    def _pump(self, proc: HookProcess, out_r: int, err_r: int) -> OutputStreams:
        """Start reading stdout (records) and stderr (the log file); a failing observer
        kills the hook."""
        streams = OutputStreams(log_path=self.output_dir / f"{self.hook.name}.stderr.log")
        streams.out_task = asyncio.ensure_future(
            pump_lines(out_r, self._on_record, self._on_junk, self.hook.key, streams.out_stats)
        )
        streams.err_task = asyncio.ensure_future(
            pump_log(err_r, streams.log_path, self.hook.key, streams.err_stats)
        )
        streams.out_task.add_done_callback(lambda t: _kill_on_error(t, proc))
        return streams

    async def _wait_for_exit(
        self, proc: HookProcess, timeout: float, streams: OutputStreams
    ) -> tuple[int, bool]:
        """(exit code, timed out): past the timeout, SIGTERM then SIGKILL. Cancelled, the
        hook is killed and its streams dropped."""
        try:
            try:
                return await self._exit_within(proc, timeout), False
            except TimeoutError:
                return await self._stop(proc), True
        except BaseException:
            proc.signal(signal.SIGKILL)  # cancelled, or the observer raised: stop the hook
            streams.cancel()
            raise

    async def _exit_within(self, proc: HookProcess, timeout: float) -> int:
        """The hook's exit code (TimeoutError past `timeout`). A hook still running after
        `started_after` seconds is reported started then: a quicker one's final result is
        the only record of its start."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        early = min(self.ctx.started_after, timeout)
        if early > 0:
            with contextlib.suppress(TimeoutError):
                return await asyncio.wait_for(asyncio.shield(proc.exited), early)
        await self.ctx.observer.record(self.hook, self.result)
        left = max(0.0, deadline - loop.time())
        return await asyncio.wait_for(asyncio.shield(proc.exited), left)

    def _reap_leftovers(self, proc: HookProcess) -> None:
        """Processes of the hook's group still alive after it exited are stopped in the
        background (the snapshot's cleanup waits for them)."""
        if proc.leftovers():
            reaper = asyncio.create_task(reaping.terminate([], [proc.pid], self.ctx.kill_grace))
            self.ctx.background_tasks.add(reaper)
            reaper.add_done_callback(self.ctx.background_tasks.discard)

    async def _collect(self, streams: OutputStreams) -> StreamStats | None:
        """Drain both streams to EOF (closing those a stray process holds open); drops an
        empty stderr log; returns the stderr stats (None if it stalled). Re-raises an
        observer error."""
        out_task, err_task = streams.out_task, streams.err_task
        pending = await streams.drain()
        for task in pending:
            log.warning("%s: output still open after exit (stray daemon?); closed", self.hook.key)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        stderr = None if err_task in pending else err_task.result()
        if stderr is not None and stderr.kept == 0:
            streams.log_path.unlink(missing_ok=True)
        if out_task not in pending:
            out_task.result()  # re-raises an observer error
        return stderr

    async def _stop(self, proc: HookProcess) -> int:
        """Timeout: SIGTERM the group, SIGKILL after the grace; returns the exit code."""
        proc.signal(signal.SIGTERM)
        try:
            return await asyncio.wait_for(asyncio.shield(proc.exited), self.ctx.kill_grace)
        except TimeoutError:
            log.warning("%s ignored SIGTERM for %.1fs: SIGKILL", self.hook.key, self.ctx.kill_grace)
            proc.signal(signal.SIGKILL)
            return await proc.exited

    async def _conclude(
        self, rc: int, timed_out: bool, timeout: float, stderr: StreamStats | None
    ) -> HookOutcome:
        """Final state from exit code, timeout and the hook's claim (see the contract)."""
        if self.bad_lines > LOGGED_BAD_LINES:
            log.warning("%s: %d stdout lines were not records", self.hook.key, self.bad_lines)
        claim = self.claim
        tail = stderr.tail.decode(errors="replace").strip().splitlines()[-1:] if stderr else []
        fields: dict[str, object] = {"exit_code": rc, "ended_at": _now()}
        if claim is not None:
            fields.update(output_str=claim.output_str, error_code=claim.error_code)
            if claim.retry_after_s is not None:
                fields["retry_after_s"] = claim.retry_after_s
        hard = timed_out or rc != 0
        if timed_out:
            self.machine.to("failed")
            fields["error_code"] = self._error_code("TIMEOUT")
            fields["output_str"] = f"timed out after {_fmt_seconds(timeout)}s"
        elif rc != 0 and (limit := limits.hit(rc, timed_out, tail[0] if tail else "")):
            self.machine.to("failed")
            fields["error_code"] = self._error_code("RESOURCE_LIMIT")
            lim = self.limits
            mb = f"{lim.memory_bytes // (1024 * 1024)} MB" if lim.memory_bytes else "no"
            fields["output_str"] = (
                f"stopped at its {limit} limit ({mb} memory, {lim.cpu_seconds:g} s CPU)"
                + (f": {tail[0]}" if tail else "")
            )
        elif rc != 0:
            self.machine.to("failed")
            fields["error_code"] = (claim and claim.error_code) or self._error_code("FAILED")
            if not fields.get("output_str"):
                why = f"killed by signal {-rc}" if rc < 0 else f"exit code {rc}"
                fields["output_str"] = f"{why}: {tail[0]}" if tail else why
        elif claim is not None and claim.status in self.machine.FINAL:
            self.machine.to(claim.status)
        else:
            self.machine.to("succeeded")
        error_code = fields.get("error_code")
        if self.machine.status == "failed" and retries(
            str(error_code) if error_code else None, crashed=hard
        ):
            retry_at = next_retry_at(self.ctx.attempt, max_attempts=self.ctx.max_attempts)
            wait = claim.retry_after_s if claim is not None and not timed_out else None
            if retry_at is not None and wait is not None:  # the site's wait, when longer
                retry_at = max(retry_at, _now() + retry_wait.bounded(wait))
            fields["retry_at"] = retry_at
        self._set(**fields)
        return await self._finish(hard=hard)

    async def cleanup(self) -> None:
        """Stop whatever is left of the hook: its process group (SIGTERM, SIGKILL after the
        grace). A no-op once the hook and everything in its group have exited."""
        if self.process is not None and (not self.process.done or self.process.leftovers()):
            await reaping.terminate([], [self.process.pid], self.ctx.kill_grace)

    async def _finish(self, *, hard: bool) -> HookOutcome:
        self.ctx.finished.setdefault(self.hook.plugin, []).append(self.result)
        self.launched.set()
        self.outcome = HookOutcome(self.hook, self.result, self.output_dir, hard)
        await self.ctx.observer.hook_finished(self.hook, self.result, self.output_dir)
        return self.outcome
