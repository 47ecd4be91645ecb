"""A Python hook forked from the pre-warmed host behaves exactly like an exec'd interpreter."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import signal
import time
from pathlib import Path

import pytest

from shared import processes
from shared.hooks import host as host_module
from shared.hooks.host import HookHost, HostError, close_shared_host, shared_host
from shared.hooks.snapshot_runner import SnapshotRun, SnapshotSpec
from shared.processes import alive as pid_alive
from tests.hooks.support import FIXTURES, Recorder, base_env, capture

MODES = [pytest.param(True, id="host"), pytest.param(False, id="exec")]


@pytest.mark.parametrize("python_host", MODES)
async def test_process_looks_like_a_fresh_interpreter(tmp_path: Path, python_host: bool) -> None:
    outcome, rec = await capture(
        tmp_path, ["probe_py"], env=base_env(PROBE="yes"), python_host=python_host
    )
    out = tmp_path / "out" / "probe_py"
    facts = json.loads((out / "facts.json").read_text())
    hook = FIXTURES / "probe_py" / "on_Snapshot__10_probe.py"
    assert facts["name"] == "__main__" and facts["file"] == str(hook)
    assert facts["argv"][0] == str(hook) and facts["argv"][1].startswith("--url=")
    assert facts["cwd"] == str(out) and facts["path0"] == str(hook.parent)
    assert facts["session_leader"] and facts["group_leader"]
    assert facts["stdin"] == "" and facts["probe_env"] == "yes"
    signals = {k: facts[k] for k in ("sigint", "sigpipe_ignored", "sigterm_default")}
    assert signals == dict.fromkeys(signals, True), (facts["handlers"], facts["blocked"])
    assert (out / "atexit.txt").read_text() == "ran"
    assert (out / "thread.txt").read_text() == "joined"
    assert (out / "pool.txt").read_text() == "pooled"
    assert rec.tags("probe_py") == ["unflushed"]
    assert outcome.hooks[0].result.exit_code == 0


@pytest.mark.parametrize("python_host", MODES)
@pytest.mark.parametrize(("how", "code"), [("3", 3), ("string", 1), ("signal", -9), ("256", 0)])
async def test_exit_statuses_match(tmp_path: Path, python_host: bool, how: str, code: int) -> None:
    outcome, _ = await capture(
        tmp_path, ["probe_py"], env=base_env(PROBE_EXIT=how), python_host=python_host
    )
    assert outcome.hooks[0].result.exit_code == code
    if how == "string":
        log = next((tmp_path / "out" / "probe_py").glob("*.stderr.log")).read_text()
        assert "a message for stderr" in log


async def test_traceback_goes_to_the_stderr_log(tmp_path: Path) -> None:
    await capture(tmp_path, ["crash_py"])
    log = next((tmp_path / "out" / "crash_py").glob("*.stderr.log")).read_text()
    assert "Traceback" in log and "RuntimeError: upstream said 500" in log


async def test_closed_host_refuses_spawns_and_the_shared_one_is_replaced(tmp_path: Path) -> None:
    host = HookHost()
    await host.start()
    assert host.usable
    host.close()
    assert not host.usable
    with pytest.raises(HostError):
        await host.spawn(["x.py"], tmp_path, {}, 1, 2)
    first = await shared_host()
    assert first is not None
    close_shared_host()
    # a generous timeout: the replacement host imports its preload first (slow under load)
    outcome, _ = await capture(tmp_path, ["ok_py"], env=base_env(TIMEOUT="60"))
    result = outcome.hooks[0].result
    assert result.status == "succeeded", result
    assert host_module._shared is not None and host_module._shared is not first


async def test_host_dying_mid_hook_is_a_hard_failure(tmp_path: Path) -> None:
    spec = SnapshotSpec(
        "s", "u", tmp_path / "out", [FIXTURES], base_env(), only_hooks=["slow_py", "after_py"]
    )
    rec = Recorder()
    run = SnapshotRun(spec, rec, kill_grace=0.5)
    task = asyncio.create_task(run.run())
    await rec.wait_for_tag("slow_py", "slow-started")
    hook_pid = run.runs[0].process.pid  # type: ignore[union-attr]
    pool = host_module._shared
    assert pool is not None
    host = pool.host_for(run.runs[0].hook.path)  # the host slow_py was forked from
    assert host is not None and host._proc is not None
    host._proc.kill()
    outcome = await task
    slow = outcome.result("slow_py")
    assert (
        slow.result.exit_code == -9 and slow.result.error_code == "E_SLOW_PY_FAILED" and slow.retry
    )
    assert not pid_alive(hook_pid)
    # forked from the other host, or exec'd
    assert outcome.result("after_py").result.status == "succeeded"


@pytest.mark.parametrize("python_host", MODES)
@pytest.mark.parametrize("unbuffered", ["", "1"], ids=["buffered", "unbuffered"])
async def test_stdout_buffering_follows_the_hooks_env(
    tmp_path: Path, python_host: bool, unbuffered: str
) -> None:
    plugin = tmp_path / "plugins" / "buf"
    plugin.mkdir(parents=True)
    (plugin / "on_Snapshot__10_buf.py").write_text(
        'import time\nprint(\'{"type": "Tag", "name": "early"}\')\ntime.sleep(0.5)\n'
    )
    env = {k: v for k, v in base_env().items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = unbuffered
    _, rec = await capture(
        tmp_path, None, env=env, python_host=python_host, plugins_dirs=[plugin.parent]
    )
    [(_, _, tag_at)] = [r for r in rec.records if r[1].type == "Tag"]
    _, _, finished_at = rec.finished["buf/on_Snapshot__10_buf.py"]
    # block-buffered on a pipe, like `python hook.py | ...`, unless PYTHONUNBUFFERED is set
    assert (finished_at - tag_at > 0.3) == bool(unbuffered)


def test_the_host_preloads_every_shared_module_a_plugin_imports() -> None:
    """A hook that imports a shared module the host did not preload pays its import time
    (up to half a second) on every capture."""
    repo = Path(__file__).resolve().parents[2]
    imported: set[str] = set()
    for path in (repo / "plugins").glob("*/*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "shared":
                imported.update(f"shared.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("shared."):
                imported.add(str(node.module))
            elif isinstance(node, ast.Import):
                imported.update(a.name for a in node.names if a.name.startswith("shared."))
    assert imported, "no plugin imports found: the plugins/ layout changed"
    preloaded = {entry.partition(":")[0] for entry in host_module.DEFAULT_PRELOAD}
    assert imported <= preloaded, imported - preloaded


async def test_a_hook_that_exits_before_its_spawn_returns_keeps_its_exit_status(
    tmp_path: Path,
) -> None:
    """The host's answer to a spawn and the child's exit status can arrive in one read, before
    the spawning coroutine runs again (a loaded machine, a hook that exits at once): the
    status belongs to that spawn, it is not a lost child killed with SIGKILL."""
    hook = tmp_path / "quick.py"
    hook.write_text("")
    host = HookHost(preload=())
    await host.start()
    try:
        spawning = asyncio.ensure_future(host.spawn([str(hook)], tmp_path, {}, 1, 2))
        await asyncio.sleep(0)  # the request is sent; the spawn waits for the answer
        # the loop is held on purpose: the child starts and exits, both messages queue
        time.sleep(1.0)  # noqa: ASYNC251
        proc = await spawning
        assert await proc.exited == 0
    finally:
        host.close()


async def spare_of(host: HookHost, not_: tuple[int, ...] = (), timeout: float = 20.0) -> int:
    """The host's one child while no hook runs (its spare), once it is not one of `not_`."""
    assert host._proc is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        kids = processes.children(host._proc.pid)
        if len(kids) == 1 and kids[0] not in not_:
            return kids[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no spare besides {not_}: {processes.children(host._proc.pid)}")


async def settled_fds(pid: int, timeout: float = 10.0) -> list[int]:
    """A new spare's open fds once it has closed the host's (it does so first thing, but a
    look right after the fork still finds them)."""
    deadline = time.monotonic() + timeout
    fds = sorted(int(fd) for fd in os.listdir(f"/proc/{pid}/fd"))
    while len(fds) > 4 and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
        fds = sorted(int(fd) for fd in os.listdir(f"/proc/{pid}/fd"))
    return fds


async def run_pid_hook(host: HookHost, tmp_path: Path) -> tuple[int, int, str]:
    """Spawn a hook printing its pid: (the pid spawn gave, the exit status, what it printed)."""
    hook = tmp_path / "pid.py"
    hook.write_text("import os\nprint(os.getpid())\n")
    r, w = os.pipe()
    try:
        proc = await host.spawn([str(hook)], tmp_path, {}, w, w)
        os.close(w)
        w = -1
        status = await proc.exited
        return proc.pid, status, os.read(r, 100).decode().strip()
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


async def test_the_next_hook_is_forked_ahead_and_holds_nothing_of_the_hosts(
    tmp_path: Path,
) -> None:
    """The host forks the next hook's process while idle (the fork's cost is not in a hook's
    start); that spare holds none of the host's fds, becomes the hook a request asks for, is
    replaced when it dies unused, and ends with the host."""
    host = HookHost(preload=())
    await host.start()
    try:
        spare = await spare_of(host)
        fds = await settled_fds(spare)
        assert len(fds) == 4 and fds[:3] == [0, 1, 2], fds  # its stdio and its own socket
        pid, status, printed = await run_pid_hook(host, tmp_path)
        assert (pid, status, printed) == (spare, 0, str(spare))  # the spare became the hook

        second = await spare_of(host, not_=(spare,))
        os.kill(second, signal.SIGKILL)  # dies unused: replaced, and its exit is no hook's
        third = await spare_of(host, not_=(spare, second))
        pid, status, printed = await run_pid_hook(host, tmp_path)
        assert (pid, status, printed) == (third, 0, str(third))
        last = await spare_of(host, not_=(spare, second, third))
    finally:
        host.close()
    deadline = time.monotonic() + 10
    while pid_alive(last) and time.monotonic() < deadline:  # noqa: ASYNC110 (a pid, no event)
        await asyncio.sleep(0.05)
    assert not pid_alive(last), "the host's spare outlived the host"
