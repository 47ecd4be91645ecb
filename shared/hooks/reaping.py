"""Hook cleanup: signalling processes and groups, `.pid` sweeps, waiting for them to end.

What a process is (alive: a zombie nobody reaps still answers `kill(pid, 0)`; its start
time, which tells a hook's leftover apart from an unrelated process that reused the PID; its
group) comes from `shared.processes`.
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

from shared import processes

log = logging.getLogger(__name__)

_TICKS = os.sysconf("SC_CLK_TCK")
"""Start times are whole clock ticks: a process started in the same tick as `since` counts."""
POLL = 0.02
"""Seconds between liveness checks while waiting for processes to exit."""


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
    """`.pid` files in `root/<plugin>/`, mapped to live PIDs that started after `since`
    (`shared.processes.clock()` seconds)."""
    found: dict[Path, int] = {}
    for path in sorted(root.glob("*/*.pid")):
        pid = read_pid_file(path)
        start = processes.started_at(pid) if pid else None
        # a PID that started before the snapshot is someone else's: never touch it
        if pid and start is not None and start >= since - 2 / _TICKS and processes.alive(pid):
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
        left = [p for p in pids if processes.alive(p)]
        for g in groups:
            left.extend(processes.group_members(g))
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
