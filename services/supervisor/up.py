"""`dla up`: run the whole archiver on this machine until Ctrl-C / SIGTERM — and always stop.

Two processes, like an init (tini) for the stack:

- the front process (the pid you started, the one signals reach) takes the data-directory
  lock, sweeps what a killed predecessor left, forks the supervisor, forwards every stop
  signal to it and exits with its exit code;
- the supervisor (its own process group, so each signal reaches it once, through the front)
  is a child subreaper; it starts the engines and services, restarts what dies, and on a
  stop request stops everything within `STOP_GRACE_S + ENGINES_GRACE_S` seconds, at once on
  a second request, then kills every descendant left. If the front process is killed -9,
  the supervisor gets SIGHUP (parent-death signal) and stops in a hurry; its own children
  get SIGKILL if the supervisor dies.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from services.supervisor import children, reaper
from services.supervisor.datalock import DataDirBusy, DataDirLock
from services.supervisor.front import forward_until_exit
from services.supervisor.signals import STOP_SIGNALS, StopRequested, StopSignals
from services.supervisor.stack import Stack
from services.supervisor.stack_file import remove_stack_file, write_stack_file
from services.supervisor.start_reports import WATCH_S, StartReports
from shared import admin_tokens

log = logging.getLogger("dla")

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BUSY = 3
"""Another `dla up` holds the data directory."""

URGENT_GRACE_S = 1.5
"""Grace for services when the front process died (kill -9): all must be gone within 5 s."""


def run_up(data_dir: Path, services: Sequence[str], web_url: str) -> int:
    """Lock, sweep, fork the supervisor, forward signals; the supervisor's exit code."""
    lock = DataDirLock(data_dir)
    try:
        lock.acquire("dla up")
    except DataDirBusy as exc:
        print(f"dla up: {exc}", file=sys.stderr)
        return EXIT_BUSY
    registry = reaper.ChildRegistry(data_dir / "run" / "children.jsonl")
    for left in registry.sweep():
        log.warning("killed %s left running by a previous dla up", left)
    sys.stdout.flush()
    sys.stderr.flush()
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    front = os.getpid()
    pid = os.fork()
    if pid == 0:
        code = EXIT_FAILED
        try:
            code = _supervise(front, old_mask, data_dir, services, web_url, registry)
        finally:
            logging.shutdown()
            sys.stdout.flush()
            os._exit(code)
    _exec_front(pid, old_mask, lock)  # returns only if the exec failed
    return _front(pid, old_mask, lock)


def _exec_front(child: int, old_mask: set[int | signal.Signals], lock: DataDirLock) -> None:
    """Become `services.supervisor.front` (same pid, a small fresh interpreter, the lock's fd
    kept open across the exec); returns only if the exec failed."""
    fd = lock.fd
    if fd is None:
        return
    os.set_inheritable(fd, True)
    argv = [
        sys.executable, "-m", "services.supervisor.front", str(child), str(fd),
        ",".join(str(int(s)) for s in STOP_SIGNALS), ",".join(str(int(s)) for s in old_mask),
    ]  # fmt: skip
    try:
        os.execv(sys.executable, argv)
    except OSError as exc:
        log.warning("dla up: the small front process could not start (%s); staying as is", exc)
        os.set_inheritable(fd, False)


def _front(child: int, old_mask: set[int | signal.Signals], lock: DataDirLock) -> int:
    """Forward stop signals to the supervisor until it exits, in this process (when the
    exec of the small front failed)."""
    assert lock.fd is not None
    return forward_until_exit(child, lock.fd, STOP_SIGNALS, old_mask)


def _supervise(
    front: int,
    old_mask: set[int | signal.Signals],
    data_dir: Path,
    services: Sequence[str],
    web_url: str,
    registry: reaper.ChildRegistry,
) -> int:
    """The supervisor process: start, supervise, stop, sweep."""
    os.setpgid(0, 0)
    signals = StopSignals()
    signals.install()
    reaper.prctl(reaper.PR_SET_PDEATHSIG, signal.SIGHUP)
    reaper.become_subreaper()
    signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
    if os.getppid() != front:
        signals.urgent = True
    children.on_start = registry.record
    if not (os.environ.get("ADMIN_TOKEN") or os.environ.get("ADMIN_TOKENS")):
        os.environ["ADMIN_TOKENS"] = admin_tokens.load_or_create(data_dir)
    stack = Stack(data_dir=data_dir, services=services, declare_apart=True)
    code = EXIT_OK
    alerts = ""
    reports: StartReports | None = None
    started = time.monotonic()
    try:
        signals.interruptible = True
        if not signals.stopping:
            stack.start_engines()
            log.info(
                "NATS at %s, S3 at %s, data in %s",
                stack.env["NATS_URL"],
                stack.env["S3_ENDPOINT"],
                data_dir,
            )
            reports = StartReports(data_dir, services)
            stack.start_services()
            alerts = stack.start_alerting()
            info = {
                "nats_url": stack.env["NATS_URL"],
                "s3_endpoint": stack.env["S3_ENDPOINT"],
                "web_url": web_url,
                "pid": front,
            }
            write_stack_file(data_dir, info)
        signals.interruptible = False
        if not signals.stopping:
            print(
                f"\n  Discourse Link Archiver is up: {web_url}\n  logs: {data_dir}/logs\n"
                f"  {alerts}\n",
                flush=True,
            )
        while not signals.wait(1.0):
            stack.supervise_once()
            reaper.reap_adopted(known=_known_pids(stack))
            if reports is not None and time.monotonic() - started < WATCH_S:
                for line in reports.lines():
                    print(f"  {line}", flush=True)
    except StopRequested as why:
        log.info("stop requested while starting (%s)", why)
    except Exception as exc:
        signals.interruptible = False
        log.error("dla up failed: %s", exc)
        code = EXIT_FAILED
    finally:
        signals.interruptible = False
        asked = time.monotonic()
        log.info("stopping%s", " in a hurry" if signals.hurry else "")
        grace = URGENT_GRACE_S if signals.urgent else None
        if grace is None:
            stack.stop(hurry=lambda: signals.hurry)
        else:
            stack.stop(grace_s=grace, engines_grace_s=1.0, hurry=lambda: signals.hurry)
        groups = [c.pid for c in _children(stack)]
        left = reaper.kill_tree(os.getpid(), groups)
        if left:
            log.warning("killed %d leftover process(es)", left)
        with contextlib.suppress(FileNotFoundError):
            registry.path.unlink()
        remove_stack_file(data_dir)
        log.info(
            "stopped in %.1fs (ran %.0fs)", time.monotonic() - asked, time.monotonic() - started
        )
    return code


def _children(stack: Stack) -> list[children.Child]:
    found = [sp.child for sp in stack.procs.values()]
    found += [e.child for e in (stack.nats, stack.weed) if e is not None]
    found += stack.alerts.children() if stack.alerts is not None else []
    return [c for c in found if c.proc is not None]


def _known_pids(stack: Stack) -> set[int]:
    return {c.pid for c in _children(stack)}
