"""Timeouts, SIGTERM then SIGKILL, .pid sweeps, leftovers, cancellation.

Nothing a hook starts outlives its snapshot."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from shared.hooks.records import ArchiveResultRecord, HookRecord
from shared.hooks.snapshot_runner import HookSpec, SnapshotRun, SnapshotSpec
from shared.processes import alive as pid_alive
from tests.hooks.support import (
    FIXTURES,
    LANGS,
    Recorder,
    base_env,
    capture,
    capture_ready,
    sh_hook,
)

# The hooks below run until they are killed. Their timeout starts when the runner spawns them;
# capture_ready lengthens it when an exec'd interpreter was not up in time (a loaded machine),
# so every assertion is about a hook that was running when its clock ran out. Upper bounds stay
# far below what the hooks would take if nobody killed them (30 s sleep, endless loops).
SLACK = 10.0


def ran(result: ArchiveResultRecord) -> float:
    """How long the runner ran one hook, spawn to reaping (the snapshot's other hooks and
    its set-up are not in it: on a loaded machine they take seconds of their own)."""
    assert result.started_at is not None and result.ended_at is not None
    return (result.ended_at - result.started_at).total_seconds()


@pytest.mark.parametrize("lang", LANGS)
async def test_foreground_timeout_is_hard_failure_and_later_hooks_run(
    tmp_path: Path, lang: tuple[str, bool]
) -> None:
    suffix, host = lang
    outcome, rec, timeout = await capture_ready(
        tmp_path,
        [f"slow_{suffix}", f"after_{suffix}"],
        ready=(f"slow_{suffix}", "slow-started"),
        python_host=host,
    )
    slow = outcome.result(f"slow_{suffix}")
    assert slow.result.status == "failed" and slow.hard_failure and slow.retry
    assert slow.result.error_code == f"E_SLOW_{suffix.upper()}_TIMEOUT"
    assert slow.result.exit_code == -15  # SIGTERM was enough
    assert rec.tags(f"slow_{suffix}") == ["slow-started"]  # streamed before the kill
    assert outcome.result(f"after_{suffix}").result.status == "succeeded"
    assert ran(slow.result) < timeout + SLACK  # not the hook's 30 s sleep


@pytest.mark.parametrize("lang", LANGS)
async def test_hook_ignoring_sigterm_gets_sigkill_after_grace(
    tmp_path: Path, lang: tuple[str, bool]
) -> None:
    suffix, host = lang
    grace = 0.7
    outcome, _, timeout = await capture_ready(
        tmp_path,
        [f"stubborn_{suffix}"],
        ready=(f"stubborn_{suffix}", "stubborn-started"),  # printed once SIGTERM is ignored
        python_host=host,
        kill_grace=grace,
    )
    result = outcome.result(f"stubborn_{suffix}").result
    assert result.exit_code == -9 and result.error_code == f"E_STUBBORN_{suffix.upper()}_TIMEOUT"
    assert timeout + grace <= ran(result) < timeout + grace + SLACK  # the grace was waited out


async def test_records_printed_on_sigterm_are_kept_but_timeout_stays_hard(tmp_path: Path) -> None:
    outcome, rec, _ = await capture_ready(
        tmp_path, ["polite_py"], ready=("polite_py", "polite-ready")
    )
    result = outcome.result("polite_py").result
    assert "polite-interrupted" in rec.tags("polite_py")  # printed on SIGTERM, streamed
    assert result.exit_code == 0 and result.error_code == "E_POLITE_PY_TIMEOUT"
    assert result.output_str.startswith("timed out")  # its claim does not make it soft
    assert result.retry_at is not None


class PidRecorder(Recorder):
    """Also notes the daemon's PID (and that it was alive) when its hook finishes."""

    daemon: int = 0
    alive_at_finish: bool = False

    async def hook_finished(
        self, hook: HookSpec, result: ArchiveResultRecord, output_dir: Path
    ) -> None:
        await super().hook_finished(hook, result, output_dir)
        pid_file = next(output_dir.glob("*.pid"))  # noqa: ASYNC240 (test code)
        self.daemon = int(pid_file.read_text())
        self.alive_at_finish = pid_alive(self.daemon)


@pytest.mark.parametrize("lang", [*LANGS, pytest.param(("py", True, "1"), id="py-ignores-term")])
async def test_double_forked_daemon_is_swept_by_its_pid_file(tmp_path: Path, lang: tuple) -> None:
    suffix, host, ignore = (*lang, "0")[:3]
    rec = PidRecorder()
    spec = SnapshotSpec(
        "s",
        "https://example.org/",
        tmp_path / "out",
        [FIXTURES],
        base_env(DAEMON_IGNORE_TERM=ignore),
        only_hooks=[f"daemon_{suffix}"],
    )
    began = time.monotonic()
    outcome = await SnapshotRun(spec, rec, kill_grace=0.5).run(python_host=host)
    assert outcome.result(f"daemon_{suffix}").result.status == "succeeded"
    assert rec.alive_at_finish  # a daemon lives through its hook ...
    assert not pid_alive(rec.daemon)  # ... but not through the snapshot
    assert not list((tmp_path / "out").glob("*/*.pid"))
    assert time.monotonic() - began < 20  # never waited on the daemon (it sleeps 60 s)


@pytest.mark.parametrize("lang", LANGS)
async def test_processes_left_in_the_hook_group_are_stopped(
    tmp_path: Path, lang: tuple[str, bool]
) -> None:
    suffix, host = lang
    began = time.monotonic()
    outcome, _ = await capture(tmp_path, [f"leftover_{suffix}"], python_host=host)
    child = int((tmp_path / "out" / f"leftover_{suffix}.child").read_text())
    assert outcome.result(f"leftover_{suffix}").result.status == "succeeded"
    assert not pid_alive(child)
    assert time.monotonic() - began < 20  # the child held stdout open: no waiting on it


async def test_pid_file_of_an_older_process_is_never_killed(tmp_path: Path) -> None:
    bystander = await asyncio.create_subprocess_exec("sleep", "30")
    try:
        await asyncio.sleep(0.05)
        (tmp_path / "out" / "other").mkdir(parents=True)
        (tmp_path / "out" / "other" / "stale.pid").write_text(str(bystander.pid))
        await capture(tmp_path, ["ok_sh"])
        assert bystander.returncode is None and pid_alive(bystander.pid)  # older: not ours
    finally:
        bystander.kill()
        await bystander.wait()


async def test_cancelling_a_snapshot_kills_its_hooks(tmp_path: Path) -> None:
    spec = SnapshotSpec(
        "s",
        "https://example.org/",
        tmp_path / "out",
        [FIXTURES],
        base_env(),
        only_hooks=["slow_sh", "after_sh"],
    )
    rec = Recorder()
    run = SnapshotRun(spec, rec, kill_grace=0.5)
    task = asyncio.create_task(run.run())
    await rec.wait_for_tag("slow_sh", "slow-started")
    pid = run.runs[0].process.pid  # type: ignore[union-attr]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not pid_alive(pid)
    assert run.runs[1].process is None  # never started


class Exploding(Recorder):
    async def record(self, hook: HookSpec, record: HookRecord) -> None:
        await super().record(hook, record)
        if record.type == "Tag":
            raise RuntimeError("the bus is down")


async def test_observer_failure_stops_the_snapshot_and_its_hooks(tmp_path: Path) -> None:
    spec = SnapshotSpec(
        "s",
        "https://example.org/",
        tmp_path / "out",
        [FIXTURES],
        base_env(),
        only_hooks=["slow_sh", "ord_e"],
    )
    run = SnapshotRun(spec, Exploding(), kill_grace=0.5)
    began = time.monotonic()
    with pytest.raises(RuntimeError, match="the bus is down"):
        await run.run()
    assert time.monotonic() - began < 20  # slow_sh was stopped, not waited out
    for r in run.runs:
        assert r.process is None or not r.process.leftovers()


async def test_daemon_that_keeps_stdout_open_cannot_hang_the_snapshot(tmp_path: Path) -> None:
    # a daemon that leaves the group but forgets to close stdout
    sh_hook(
        tmp_path / "plugins",
        "sloppy",
        "on_Snapshot__10_sloppy.sh",
        "setsid sleep 60 &\necho $! > sloppy.pid\nsleep 0.1",
    )
    began = time.monotonic()
    rec = PidRecorder()
    spec = SnapshotSpec("s", "u", tmp_path / "out", [tmp_path / "plugins"], base_env())
    outcome = await SnapshotRun(spec, rec, kill_grace=0.5).run()
    assert outcome.result("sloppy").result.status == "succeeded"
    assert rec.alive_at_finish and not pid_alive(rec.daemon)
    assert time.monotonic() - began < 20  # gave up on the pipe (the daemon sleeps 60 s)
    assert not list((tmp_path / "out").glob("*/*.pid"))
