"""A plugin's hook run in its tests as the archiver runs it: a process forked from a
pre-warmed hook host (`shared.hooks.host`), in its own session, with the test's cwd, env
and argv. A fresh `python hook.py` spends 0.9-1.6 s of CPU importing httpx, the content
extractors, yt-dlp and the shared modules before the hook does anything; one host per test
process pays that once and each run is then a fork. The host and the hook run are the
product's; tests/hooks/test_host.py checks a forked hook cannot tell it from an exec'd one.

A pytest plugin (`-p testkit.hook_runs`): the host starts on the first `run_hook` and
stops when the session ends."""

from __future__ import annotations

import asyncio
import signal
import tempfile
import threading
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from shared.hooks.host import HookHost

T = TypeVar("T")


@dataclass(frozen=True)
class HookRun:
    """What a finished hook left: its exit status and its whole output."""

    returncode: int
    """The exit status, or -N when killed by signal N."""
    stdout: bytes
    stderr: bytes


class HookRunner:
    """One hook host on an event loop of its own (a thread), for synchronous tests."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.host = HookHost()
        self._call(self.host.start(), 120)  # a bound: the preload imports slowly at load

    def _call(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def run(
        self, argv: Sequence[str], cwd: Path, env: Mapping[str, str], timeout: float
    ) -> HookRun:
        """Run the Python file argv[0] with argv[1:]; a run past `timeout` seconds has its
        process group killed and raises TimeoutError (as subprocess.run's timeout)."""
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            code = self._call(self._run(argv, cwd, env, out.fileno(), err.fileno(), timeout),
                              timeout + 30)  # fmt: skip
            out.seek(0)
            err.seek(0)
            if code is None:
                raise TimeoutError(f"{argv[0]} ran past {timeout} s: {err.read()[-2000:]!r}")
            return HookRun(code, out.read(), err.read())

    async def _run(
        self, argv: Sequence[str], cwd: Path, env: Mapping[str, str], out: int, err: int,
        timeout: float,
    ) -> int | None:  # fmt: skip
        proc = await self.host.spawn(argv, cwd, env, out, err)
        try:
            return await asyncio.wait_for(asyncio.shield(proc.exited), timeout)
        except TimeoutError:
            proc.signal(signal.SIGKILL)
            await proc.exited
            return None

    def stop(self) -> None:
        """Stop the host (a hook still running is killed) and the loop."""
        self.loop.call_soon_threadsafe(self.host.close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


_runner: HookRunner | None = None
_runner_lock = threading.Lock()


def run_hook(
    hook: Path, args: Sequence[str], cwd: Path, env: Mapping[str, str], timeout: float = 120
) -> HookRun:
    """Run `hook` with `args` in `cwd` under exactly `env` (pass `os.environ` and more for
    an interpreter's usual environment), forked from this test process's hook host."""
    global _runner
    with _runner_lock:
        if _runner is not None and not _runner.host.usable:  # the host died: a new one
            _runner.stop()
            _runner = None
        if _runner is None:
            _runner = HookRunner()
        runner = _runner
    return runner.run([str(hook), *args], cwd, dict(env), timeout)


def pytest_unconfigure(config: pytest.Config) -> None:
    global _runner
    if _runner is not None:
        _runner.stop()
        _runner = None
