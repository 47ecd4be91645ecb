"""Process helpers for hook cleanup: liveness (zombies count as dead), groups, `.pid` sweeps.

Linux /proc is the source of truth: a zombie nobody reaps still answers `kill(pid, 0)`, and
its start time tells a hook's leftover apart from an unrelated process that reused the PID.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger(__name__)

_TICKS = os.sysconf("SC_CLK_TCK")
POLL = 0.02
"""Seconds between liveness checks while waiting for processes to exit."""


def boot_clock() -> float:
    """Seconds since boot, on the clock /proc start times use."""
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def _stat(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name (state first), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return raw.rsplit(b")", 1)[1].decode().split()


def pid_alive(pid: int) -> bool:
    """True if the process exists and is not a zombie."""
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def started_at(pid: int) -> float | None:
    """Start time of a process in boot-clock seconds, or None if it is gone."""
    fields = _stat(pid)
    return int(fields[19]) / _TICKS if fields else None


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of a process group."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return []
    members = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields and fields[0] not in ("Z", "X") and int(fields[2]) == pgid:
                members.append(int(entry.name))
    return members


def signal_group(pgid: int, sig: int) -> None:
    """Send `sig` to a process group; the group being gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def read_pid_file(path: Path) -> int | None:
    """The PID in a `.pid` file (first token), or None if unreadable."""
    try:
        token = path.read_text().split()[0]
        return int(token) if int(token) > 1 else None
    except (OSError, ValueError, IndexError):
        return None


def pid_file_targets(root: Path, since: float) -> dict[Path, int]:
    """`.pid` files in `root/<plugin>/`, mapped to live PIDs that started after `since`."""
    found: dict[Path, int] = {}
    for path in sorted(root.glob("*/*.pid")):
        pid = read_pid_file(path)
        start = started_at(pid) if pid else None
        # a PID that started before the snapshot is someone else's: never touch it
        if pid and start is not None and start >= since - 2 / _TICKS and pid_alive(pid):
            found[path] = pid
    return found


async def terminate(pids: Iterable[int], groups: Iterable[int], grace: float) -> list[int]:
    """SIGTERM processes and groups, SIGKILL whatever is alive after `grace`; returns the
    PIDs that needed SIGKILL."""
    pids, groups = set(pids), set(groups)
    for g in groups:
        signal_group(g, signal.SIGTERM)
    for p in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, signal.SIGTERM)

    def alive() -> list[int]:
        left = [p for p in pids if pid_alive(p)]
        for g in groups:
            left.extend(group_members(g))
        return left

    deadline = time.monotonic() + grace
    while (left := alive()) and time.monotonic() < deadline:  # noqa: ASYNC110 (no event to await)
        await asyncio.sleep(min(POLL * 5, max(0.0, deadline - time.monotonic())))
    if not left:
        return []
    log.warning("SIGKILL after %.1fs grace: %s", grace, sorted(set(left)))
    for g in groups:
        signal_group(g, signal.SIGKILL)
    for p in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, signal.SIGKILL)
    for _ in range(50):
        if not alive():
            break
        await asyncio.sleep(POLL)
    return sorted(set(left))
