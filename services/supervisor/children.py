"""Child processes started in their own process group and stopped by PID."""

from __future__ import annotations

import contextlib
import logging
import os
import random
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from services.supervisor.reaper import die_with_parent
from shared import processes

log = logging.getLogger(__name__)

on_start: Callable[[str, int], None] | None = None
"""Called with (name, pid) after every child starts (`dla up` records them to sweep later)."""


PORTS_FROM = 10000
"""Ports for the stack's servers are chosen from here up to the kernel's ephemeral range."""
PORT_RANGE_ENV = "DLA_PORT_RANGE"
"""`LOW-HIGH`: the ports free_ports draws from instead, for the processes that inherit it.
Processes that pick ports at once each start at a random place and go onward, but a port one
chose is not bound until its server starts, seconds later, and another may pick it meanwhile:
processes given disjoint ranges never do (the test suite gives each of its workers one)."""
_next_port: int | None = None
"""Where this process looks next (a random start, then onward: like the kernel, a port
handed out is not handed out again soon, and processes starting at once look apart)."""


def port_range() -> tuple[int, int]:
    """[low, high) of the ports free_ports draws from: DLA_PORT_RANGE's when it is set and
    sane, else PORTS_FROM up to the kernel's ephemeral range."""
    default = (PORTS_FROM, processes.ephemeral_ports().start)
    low_s, _, high_s = os.environ.get(PORT_RANGE_ENV, "").partition("-")
    try:
        low, high = int(low_s), int(high_s) + 1
    except ValueError:
        return default
    return (low, high) if 1024 <= low < high <= 65536 else default


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """`count` distinct TCP ports free on host now, for servers that bind them later: chosen
    below the kernel's ephemeral range (processes.ephemeral_ports), where no outgoing
    connection takes one meanwhile (a port the kernel hands out for `bind(0)` lies inside
    it: a writer once found its metrics port taken that way); the kernel's own choice when
    nothing is free below."""
    global _next_port
    low, high = port_range()
    span = max(0, high - low)
    if _next_port is None or not low <= _next_port < high:
        _next_port = low + random.randrange(span) if span else low
    socks: list[socket.socket] = []
    tried = 0
    try:
        while len(socks) < count:
            port = 0
            if tried < span:
                port, tried = _next_port, tried + 1
                _next_port = low + (_next_port + 1 - low) % span
            s = socket.socket()
            try:
                s.bind((host, port))
            except OSError:
                s.close()
                continue
            socks.append(s)
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


def wait_for_port(host: str, port: int, timeout: float) -> bool:
    """True once something accepts TCP connections on host:port."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
            return True
        time.sleep(0.05)
    return False


class Child:
    """One managed child process."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        log_path: Path | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.env = dict(env) if env is not None else dict(os.environ)
        self.log_path = log_path
        self.cwd = cwd
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def start(self) -> Child:
        """Start the process in a new session (its own process group).

        Started from the main thread, the child also dies with its parent (parent-death
        signal): the signal follows the starting *thread*, so other threads do not set it.
        """
        out: int | IO[bytes] | None = None
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log = self.log_path.open("ab")
            out = self._log
        self.proc = subprocess.Popen(
            self.argv,
            env=self.env,
            cwd=self.cwd,
            stdout=out,
            stderr=subprocess.STDOUT if out is not None else None,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=die_with_parent()
            if threading.current_thread() is threading.main_thread()
            else None,
        )
        if on_start is not None:
            on_start(self.name, self.proc.pid)
        log.debug("started %s pid %d: %s", self.name, self.proc.pid, " ".join(self.argv))
        return self

    @property
    def pid(self) -> int:
        """The child's PID."""
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        """True while the process runs."""
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig: int) -> None:
        """Send a signal to the child's process group."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, sig)

    def close_log(self) -> None:
        """Close the log file once the process is gone."""
        if self._log is not None and not self.alive():
            self._log.close()
            self._log = None

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM the process group, SIGKILL after timeout; returns the exit code."""
        if self.proc is None:
            return None
        if self.alive():
            self.signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                log.warning("%s did not stop in %.0fs; killing", self.name, timeout)
                self.signal(signal.SIGKILL)
                self.proc.wait(5)
        if self._log is not None:
            self._log.close()
            self._log = None
        return self.proc.returncode


def stop_all(children: Sequence[Child], grace_s: float, hurry: Callable[[], bool]) -> None:
    """SIGTERM every child's group at once; SIGKILL the groups after `grace_s` or on `hurry()`."""
    for child in children:
        child.signal(signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while any(c.alive() for c in children) and time.monotonic() < deadline and not hurry():
        time.sleep(0.05)
    for child in children:
        if child.proc is None:
            continue
        if child.alive():
            log.warning("%s did not stop in time; killing", child.name)
        # the whole group: a leader that exited may leave members behind
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.proc.wait(5)
        child.close_log()
