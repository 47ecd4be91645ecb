"""Client of the pre-warmed hook host (see `shared.hooks.forkserver`).

A plain `python hook.py` spends ~15-20 ms starting the interpreter and importing pydantic
before the hook does anything. The host pays that once; each Python hook is then a fork of
it: still its own process in its own session, with the hook's cwd, env, argv, stdout,
stderr, exit status and signals, so the hook cannot tell (and need not care).
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import itertools
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from shared.errors import ArchiverError
from shared.hooks.hook_imports import held_by, imported_modules
from shared.hooks.limits import HookLimits
from shared.hooks.spawn import HookProcess

log = logging.getLogger(__name__)

DEFAULT_PRELOAD: tuple[str, ...] = (
    "argparse",
    "asyncio",
    "json",
    "mimetypes",
    "pathlib",
    "subprocess",
    "urllib.parse",
    "hashlib",
    "httpx",
    "anyio._backends._asyncio",  # httpcore imports it on a client's first request
    # every shared module a hook in plugins/ imports (tests/hooks/test_host.py keeps this true)
    "shared.content.plaintext",
    "shared.content.article",
    "shared.content.inputs",
    "shared.content.metadata:warm",
    "shared.content.no_archive",
    "shared.content.pdf",
    "shared.content.sanitize",
    "shared.content.walls",
    "shared.content.video_hint",
    "shared.cookies",
    "shared.errors",
    "shared.fetching",
    "shared.fetching.exchange",
    "shared.fetching.sniffing",
    "shared.fetching.socket_guard",
    "shared.fetching.warc",
    "shared.hooks.config",
    "shared.hooks.error_codes",
    "shared.hooks.records",
    "shared.links.urlparts",
    "shared.pageclient",
    "shared.platforms",
    "shared.platforms.chain",
    "shared.platforms.hook",
    "shared.platforms.http",
    "shared.platforms.kept",
    "shared.platforms.page",
    "shared.platforms.post",
    "shared.platforms.ytdlp",
    "shared.platforms.ytdlp_errors",
    "shared.targets",
    # what those import only when they run (to spare the services that never do)
    "yt_dlp",
    "yt_dlp.jsinterp",
    "yt_dlp.networking.exceptions",
    "yt_dlp.utils",
)
"""Modules imported once in the host so hooks find them ready (`module:function` also calls
the function, to fill a module's lazy caches before forking). A hook that imports one
itself pays for it on every run: httpx ~100 ms, shared.content (trafilatura,
readability-lxml, jusText, lxml, nh3) ~500 ms, shared.fetching and shared.content.video_hint
(which pull in shared.links: tldextract, the pydantic message models) 250-550 ms. A module
that fails to import only costs speed."""
LIGHT_PRELOAD: tuple[str, ...] = (
    "argparse",
    "asyncio",
    "json",
    "pathlib",
    "subprocess",
    "urllib.parse",
    "hashlib",
    "shared.content.no_archive",
    "shared.content.walls",
    "shared.errors",
    "shared.fetching.retry_after",
    "shared.hooks.config",
    "shared.hooks.error_codes",
    "shared.hooks.records",
    "shared.pageclient",
)
"""The light host's preload: what the browser's hooks (navigate, dismiss, scroll,
screenshot, pdf, dom, traffic) and a plain hook need. Forking a process costs in proportion
to its memory (its page tables are copied, then torn down at the child's exit): ~17 ms of
CPU from the full host's ~65 MB of private memory, about half that from this one, and a
capture forks a dozen hooks. `HostPool` sends each hook to the light host when it holds
every module the hook imports (`shared.hooks.hook_imports`), else to the full one."""
START_TIMEOUT = 20.0
"""Seconds the host may take to import its preload and say ready."""
MAX_MESSAGE = 4 * 1024 * 1024
"""Largest message read from a host (its `ready` lists every module it holds)."""


class HostError(ArchiverError):
    """The hook host is not running or refused a spawn (callers fall back to exec)."""


class HookHost:
    """One long-lived fork server; `spawn()` starts a Python hook as its child."""

    def __init__(self, preload: Sequence[str] = DEFAULT_PRELOAD) -> None:
        self.preload = tuple(preload)
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ids = itertools.count(1)
        self._spawns: dict[int, asyncio.Future[HookProcess]] = {}
        """Spawn requests waiting for the host's answer, by request id."""
        self._exits: dict[int, asyncio.Future[int]] = {}
        self._ready: asyncio.Future[int] | None = None
        self.modules: frozenset[str] = frozenset()
        """Names of the modules the running host holds (it says so when ready)."""
        self.packages: dict[str, list[str]] = {}
        """The folders of each package it holds."""

    @property
    def usable(self) -> bool:
        """True while the host process runs and its socket is open."""
        return self._sock is not None and self._proc is not None and self._proc.poll() is None

    async def start(self) -> None:
        """Start the host and wait until its preload is imported."""
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with child:
            argv = [sys.executable, "-m", "shared.hooks.forkserver", str(child.fileno())]
            self._proc = await asyncio.to_thread(
                subprocess.Popen,
                [*argv, *self.preload],
                pass_fds=[child.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                start_new_session=True,
            )
        parent.setblocking(False)
        self._sock = parent
        self._ready = asyncio.get_running_loop().create_future()
        self._bind()
        try:
            await asyncio.wait_for(self._ready, START_TIMEOUT)
        except (TimeoutError, HostError) as e:
            self.close()
            raise HostError(f"hook host did not start: {e}") from e

    def _bind(self) -> None:
        """Read the socket from the running loop (a host outlives one event loop)."""
        loop = asyncio.get_running_loop()
        if self._loop is loop or self._sock is None:
            return
        if self._loop is not None and not self._loop.is_closed():
            with contextlib.suppress(Exception):
                self._loop.remove_reader(self._sock.fileno())
        self._loop = loop
        loop.add_reader(self._sock.fileno(), self._on_readable)

    def _on_readable(self) -> None:
        assert self._sock is not None
        while True:
            try:
                data = self._sock.recv(MAX_MESSAGE)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self._lost("hook host exited")
                return
            self._handle(json.loads(data))

    def _handle(self, msg: dict[str, Any]) -> None:
        if "ready" in msg and self._ready is not None and not self._ready.done():
            self.modules = frozenset(msg.get("modules", ()))
            self.packages = {str(k): list(v) for k, v in msg.get("packages", {}).items()}
            self._ready.set_result(int(msg["ready"]))
        elif "id" in msg:
            fut = self._spawns.pop(int(msg["id"]), None)
            if fut is None or fut.done():
                return
            if "pid" in msg:
                # the exit future goes with the answer: the child's exit status may be read
                # in this same batch, before the spawning coroutine runs again
                assert self._loop is not None
                pid = int(msg["pid"])
                exited = self._exits[pid] = self._loop.create_future()
                fut.set_result(HookProcess(pid, exited))
            else:
                fut.set_exception(HostError(str(msg.get("error"))))
        elif "status" in msg:
            exit_fut = self._exits.pop(int(msg["pid"]), None)
            if exit_fut is not None and not exit_fut.done():
                exit_fut.set_result(os.waitstatus_to_exitcode(int(msg["status"])))

    def _lost(self, why: str) -> None:
        """The host died: fail everything in flight (those hooks count as hard failures)."""
        if self._loop is not None and self._sock is not None and not self._loop.is_closed():
            with contextlib.suppress(Exception):
                self._loop.remove_reader(self._sock.fileno())
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        pending: list[asyncio.Future[Any]] = [*self._spawns.values()]
        if self._ready is not None:
            pending.append(self._ready)
        for fut in pending:
            if not fut.done():
                fut.set_exception(HostError(why))
        for pid, exit_fut in self._exits.items():
            # without the host nobody can report their status: stop them, count them killed
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            if not exit_fut.done():
                exit_fut.set_result(-signal.SIGKILL)
        self._spawns.clear()
        self._exits.clear()

    async def spawn(
        self,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str],
        stdout: int,
        stderr: int,
        limits: HookLimits | None = None,
    ) -> HookProcess:
        """Fork a child that runs the Python file argv[0] with argv[1:] as its arguments,
        under `limits` (set in the child before the hook runs)."""
        if not self.usable:
            raise HostError("hook host is not running")
        self._bind()
        assert self._sock is not None and self._loop is not None
        req_id = next(self._ids)
        fut: asyncio.Future[HookProcess] = self._loop.create_future()
        self._spawns[req_id] = fut
        payload = json.dumps(
            {
                "id": req_id,
                "argv": list(argv),
                "cwd": str(cwd),
                "env": dict(env),
                "limits": (limits or HookLimits(0, 0)).as_dict(),
            }
        )
        fds = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [stdout, stderr]))]
        while True:
            try:
                self._sock.sendmsg([payload.encode()], fds)
                break
            except BlockingIOError:
                await asyncio.sleep(0.001)
            except OSError as e:
                self._spawns.pop(req_id, None)
                self._lost(f"hook host unreachable: {e}")
                raise HostError(str(e)) from e
        return await fut  # if the host dies meanwhile, _lost() kills the child and ends it

    def close(self) -> None:
        """Stop the host; hooks it still runs are killed (nobody could report their status)."""
        self._lost("hook host closed")
        if self._proc is not None:
            try:
                self._proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None


class HostPool:
    """The light and the full host; `spawn()` forks a hook from the light one when it holds
    everything the hook imports, else from the full one (or whichever still runs)."""

    def __init__(self, light: HookHost | None, full: HookHost | None) -> None:
        self.light = light
        self.full = full

    @property
    def usable(self) -> bool:
        """True while either host runs."""
        return any(h is not None and h.usable for h in (self.light, self.full))

    def host_for(self, hook: Path) -> HookHost | None:
        """The host a hook file is forked from (None: neither runs)."""
        light, full = self.light, self.full
        if light is not None and light.usable:
            needs = imported_modules(hook)
            if held_by(needs, light.modules, light.packages):
                return light
        if full is not None and full.usable:
            return full
        return light if light is not None and light.usable else None

    async def spawn(
        self,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str],
        stdout: int,
        stderr: int,
        limits: HookLimits | None = None,
    ) -> HookProcess:
        """`HookHost.spawn` on the host `host_for(argv[0])` picks."""
        host = self.host_for(Path(argv[0]))
        if host is None:
            raise HostError("no hook host is running")
        return await host.spawn(argv, cwd, env, stdout, stderr, limits)

    def close(self) -> None:
        """Stop both hosts."""
        for host in (self.light, self.full):
            if host is not None:
                host.close()


_shared: HostPool | None = None


async def _started(preload: Sequence[str]) -> HookHost | None:
    host = HookHost(preload)
    try:
        await host.start()
    except HostError as e:
        log.warning("%s", e)
        return None
    return host


_starting: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)
"""One start at a time (a worker warms the hosts while its first job may ask for them)."""


async def shared_host() -> HostPool | None:
    """The process-wide pair of hosts, started on first use; a host found not running is
    started again (the other, and the hooks it runs, are left alone). None (Python hooks
    are exec'd) if neither runs."""
    lock = _starting.setdefault(asyncio.get_running_loop(), asyncio.Lock())
    async with lock:
        return await _shared_host()


async def _shared_host() -> HostPool | None:
    global _shared
    pool = _shared or HostPool(None, None)
    light, full = await asyncio.gather(
        _running(pool.light, LIGHT_PRELOAD), _running(pool.full, DEFAULT_PRELOAD)
    )
    pool = HostPool(light, full)
    if not pool.usable:
        log.warning("no hook host started; Python hooks will be exec'd")
        _shared = None
        return None
    _shared = pool
    return pool


async def _running(host: HookHost | None, preload: Sequence[str]) -> HookHost | None:
    """`host` if it still runs (bound to this loop), else a new one (None if it fails)."""
    if host is not None and host.usable:
        host._bind()
        return host
    if host is not None:
        host.close()  # reaps it
    return await _started(preload)


def close_shared_host() -> None:
    """Stop the process-wide hosts (e.g. at worker shutdown)."""
    global _shared
    if _shared is not None:
        _shared.close()
        _shared = None
