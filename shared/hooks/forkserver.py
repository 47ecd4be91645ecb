"""The hook host process: a pre-warmed Python that forks one child per Python hook.

Started by `shared.hooks.host.HookHost` as `python -m shared.hooks.forkserver <fd> <module>...`
with one end of a SOCK_SEQPACKET socketpair. It imports the given modules once (and calls
`function` of a `module:function` entry: a cache to fill before forking), then for
each request (JSON + the hook's stdout/stderr fds via SCM_RIGHTS) forks a child that calls
setsid, takes the fds as 1 and 2 (stdin is /dev/null), sets cwd/env/argv/sys.path[0] and
runs the hook file with runpy as `__main__`, then exits with the hook's exit status.
The host reaps children and reports `{"pid", "status"}` (a raw wait status). It exits
when the socket closes. Single-threaded on purpose: forking from one thread is safe.

The fork itself is paid between hooks: whenever the host is idle without one, it forks a
*spare* child that closes everything of the host's and waits on a socket of its own; a request
is handed to the spare (its JSON and fds passed on), which becomes the hook exactly as a child
forked then would (`_child`). Copying the host's page tables and running the at-fork handlers
(1.5-2 ms of CPU from the light host, 5-6 ms from the full one, and the time of it) is then
no longer between a hook's spawn and its first line. Without a spare (two requests at once,
a spare that died) the host forks as before.
"""

from __future__ import annotations

import array
import atexit
import contextlib
import gc
import importlib
import io
import json
import os
import pkgutil  # noqa: F401  (runpy.run_path imports it per call otherwise)
import runpy
import selectors
import signal
import socket
import sys
import threading
import traceback
from typing import Any

from shared.hooks import limits

MAX_MESSAGE = 1024 * 1024
"""Largest request (argv + env) the host accepts."""
READY_MAX = 160 * 1024
"""Largest `ready` message (within a socket's default send buffer, 208 KB); a host whose
module list is longer says only that it is ready, and no hook is routed to it by that list."""


def _exit_code(code: object) -> int:
    """What CPython does with SystemExit(code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _run_hook(path: str) -> int:
    """Run the hook file as __main__ and end like an interpreter would; returns the status."""
    try:
        runpy.run_path(path, run_name="__main__")
        code = 0
    except SystemExit as e:
        code = _exit_code(e.code)
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    except BaseException:
        traceback.print_exc()
        code = 1
        limits.report_if_near()  # any library's failed allocation reads as a MemoryError
    # what an interpreter does at exit: threading's own exit calls (a ThreadPoolExecutor left
    # open wakes its idle workers so they end), then every non-daemon thread joined
    threading._shutdown()  # type: ignore[attr-defined]
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            code = code or 120  # as CPython does when flushing stdout fails at exit
    return code


def _fresh_stdio(env: dict[str, str]) -> None:
    """sys.stdin/stdout/stderr as a fresh interpreter would build them for this env (the
    host's own were made for the host's env): stdout block-buffered on a pipe unless
    PYTHONUNBUFFERED, stderr line-buffered, PYTHONIOENCODING honoured."""
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))
    encoding, _, errors = env.get("PYTHONIOENCODING", "").partition(":")
    encoding = encoding or "utf-8"

    def stream(fd: int, mode: str, err: str, line: bool) -> io.TextIOWrapper:
        raw = io.FileIO(fd, mode, closefd=False)
        buf: Any = (
            raw
            if unbuffered and mode == "w"
            else (io.BufferedWriter(raw) if mode == "w" else io.BufferedReader(raw))
        )
        return io.TextIOWrapper(
            buf,
            encoding=encoding,
            errors=errors or err,
            line_buffering=line,
            write_through=unbuffered and mode == "w",
        )

    sys.stdin = sys.__stdin__ = stream(0, "r", "strict", False)  # type: ignore[misc]
    sys.stdout = sys.__stdout__ = stream(1, "w", "strict", False)  # type: ignore[misc]
    sys.stderr = sys.__stderr__ = stream(2, "w", "backslashreplace", True)  # type: ignore[misc]


def _fd_ceiling() -> int:
    """Past the highest fd a process of the host may hold (for closing all from one up)."""
    return max(65536, os.sysconf("SC_OPEN_MAX"))


def _child(req: dict[str, Any], out_fd: int, err_fd: int) -> None:
    """In the forked child: become the hook process, run it, never return."""
    code = 1
    try:
        os.setsid()
        limits.apply(**req.get("limits", {}))  # before the hook runs a single line
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # what a fresh interpreter does
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        os.closerange(3, _fd_ceiling())  # close_range(2) on Linux
        os.chdir(req["cwd"])
        os.environ.clear()
        os.environ.update(req["env"])
        _fresh_stdio(req["env"])
        path = req["argv"][0]
        sys.argv = list(req["argv"])
        sys.path[0] = os.path.dirname(os.path.abspath(path))
        code = _run_hook(path)
    except BaseException:
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        os._exit(code)


def _send(sock: socket.socket, msg: dict[str, Any]) -> None:
    sock.send(json.dumps(msg).encode())


def serve(sock: socket.socket) -> None:
    """Answer spawn requests until the socket closes."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    children: set[int] = set()
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_READ)
    sel.register(wake_r, selectors.EVENT_READ)
    ready = json.dumps({"ready": os.getpid(), **_held()}).encode()
    if len(ready) > READY_MAX:  # past what one datagram may carry: say ready, hold nothing
        ready = json.dumps({"ready": os.getpid()}).encode()
    sock.send(ready)
    spares = Spares()
    while True:
        events = sel.select(0 if spares.wanted else None)
        if not events and spares.wanted:  # idle: fork the next hook's process now
            spares.fork()
            continue
        for key, _ in events:
            if key.fileobj == wake_r:
                with contextlib.suppress(BlockingIOError):
                    while os.read(wake_r, 4096):
                        pass
                continue
            msg, anc, _, _ = sock.recvmsg(MAX_MESSAGE, socket.CMSG_SPACE(8 * 4))
            fds = [fd for level, kind, data in anc for fd in _fds(level, kind, data)]
            if not msg:
                return
            _spawn(sock, msg, fds, children, spares)
        _reap(sock, children, spares)


class Spares:
    """The one child forked ahead of the next request (see the module's docstring)."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self._sock: socket.socket | None = None
        self.wanted = True
        """True while there is no spare and the host should fork one when idle."""
        self.lost: int | None = None
        """A spare that died before it got its request, until it is reaped."""

    def fork(self) -> None:
        """Fork a spare; on failure (no memory, too many processes) fork at each request as
        before, and try again after the next one."""
        self.wanted = False
        try:
            host_end, spare_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        except OSError:  # no fd left: no spare either
            return
        try:
            pid = os.fork()
        except OSError:
            host_end.close()
            spare_end.close()
            return
        if pid == 0:
            _spare(spare_end)
        spare_end.close()
        self.pid, self._sock = pid, host_end

    def hand_over(self, msg: bytes, fds: list[int]) -> int | None:
        """Give the request to the spare: its pid, or None (no spare, or it is gone)."""
        pid, sock = self.pid, self._sock
        if pid is None or sock is None:
            return None
        self.pid, self._sock, self.wanted = None, None, True
        try:
            sock.sendmsg([msg], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
        except OSError:  # it died (its exit is reaped as a spare's: never reported)
            self.lost = pid
            return None
        finally:
            sock.close()  # the spare reads the request, then never this socket again
        return pid

    def reaped(self, pid: int) -> bool:
        """True when `pid` was a spare that never became a hook (its exit is nobody's)."""
        if pid == self.lost:
            self.lost = None
            return True
        if pid != self.pid:
            return False
        if self._sock is not None:
            self._sock.close()
        self.pid, self._sock, self.wanted = None, None, True
        return True


def _spare(sock: socket.socket) -> None:
    """In a spare child: hold none of the host's fds, wait for one request and become its
    hook (`_child`); exit when the host's end closes first. Never returns."""
    try:
        signal.set_wakeup_fd(-1)
        keep = sock.fileno()
        os.closerange(3, keep)
        os.closerange(keep + 1, _fd_ceiling())
        msg, anc, _, _ = sock.recvmsg(MAX_MESSAGE, socket.CMSG_SPACE(8 * 4))
        fds = [fd for level, kind, data in anc for fd in _fds(level, kind, data)]
        if msg and len(fds) == 2:
            _child(json.loads(msg), fds[0], fds[1])
    except BaseException:
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    os._exit(1)


def _held() -> dict[str, Any]:
    """What the host holds, for the client's routing (`shared.hooks.hook_imports`): every
    loaded module's name, and each loaded package's folders."""
    packages: dict[str, list[str]] = {}
    for name, module in list(sys.modules.items()):
        with contextlib.suppress(Exception):  # a lazy module may refuse the attribute
            path = getattr(module, "__path__", None)
            if path is not None:
                packages[name] = [str(p) for p in path]
    return {"modules": sorted(sys.modules), "packages": packages}


def _fds(level: int, kind: int, data: bytes) -> list[int]:
    if level != socket.SOL_SOCKET or kind != socket.SCM_RIGHTS:
        return []
    n = len(data) - len(data) % 4
    return list(memoryview(data)[:n].cast("i"))


def _spawn(
    sock: socket.socket, msg: bytes, fds: list[int], children: set[int], spares: Spares
) -> None:
    req: dict[str, Any] = json.loads(msg)
    try:
        if len(fds) != 2:
            raise OSError(f"expected 2 fds, got {len(fds)}")
        pid = spares.hand_over(msg, fds)
        if pid is None:
            pid = os.fork()
    except OSError as e:
        _send(sock, {"id": req.get("id"), "error": str(e)})
    else:
        if pid == 0:
            _child(req, fds[0], fds[1])
        children.add(pid)
        _send(sock, {"id": req["id"], "pid": pid})
    finally:
        for fd in fds:
            os.close(fd)


def _reap(sock: socket.socket, children: set[int], spares: Spares) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if spares.reaped(pid):
            continue
        children.discard(pid)
        _send(sock, {"pid": pid, "status": status})


def main(argv: list[str]) -> None:
    """Entry point: `python -m shared.hooks.forkserver <socket fd> [module ...]`."""
    sock = socket.socket(fileno=int(argv[0]))
    for entry in argv[1:]:
        name, _, warm = entry.partition(":")
        try:
            module = importlib.import_module(name)
            if warm:
                getattr(module, warm)()
        except Exception as e:  # a missing optional module only costs speed
            print(f"hook host: cannot preload {entry}: {e}", file=sys.stderr)
    gc.collect()
    gc.freeze()  # children never scan (so never copy-on-write) the preloaded heap
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        serve(sock)


if __name__ == "__main__":
    main(sys.argv[1:])
