"""Nothing outlives `dla up`: parent-death signals, a child subreaper, and a pid file swept.

- Each child gets ``PR_SET_PDEATHSIG`` (SIGKILL when the process that started it dies).
- The supervising process is a child subreaper (``PR_SET_CHILD_SUBREAPER``): descendants
  orphaned by a service (hook processes, browsers in their own sessions) are re-parented to it,
  so the final sweep finds and kills every one of them.
- Every child's pid, process group and start time go to DATA_DIR/run/children.jsonl; the next
  start kills whatever of them is still running (if the supervisor itself was killed -9).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import os
import signal
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from shared import processes

log = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
_libc = ctypes.CDLL(None, use_errno=True)


def prctl(option: int, value: int) -> bool:
    """Call prctl(2); False where it is not available (not Linux) or refused."""
    try:
        return int(_libc.prctl(option, value, 0, 0, 0)) == 0
    except AttributeError:
        return False


def die_with_parent(sig: int = signal.SIGKILL) -> Callable[[], None]:
    """A `preexec_fn`: the child gets `sig` when its parent dies (also if it already has)."""
    parent = os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, sig)
        if os.getppid() != parent:
            os.kill(os.getpid(), sig)

    return preexec


def become_subreaper() -> bool:
    """Orphaned descendants get this process as their parent (Linux >= 3.4)."""
    return prctl(PR_SET_CHILD_SUBREAPER, 1)


def reap_adopted(known: Iterable[int] = ()) -> None:
    """Collect exited orphans re-parented to us (not the children `Popen` waits for)."""
    skip = set(known)
    for pid in processes.children(os.getpid(), zombies=True):
        if pid not in skip:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    """Signal a process group, if any member is left."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class ChildRegistry:
    """DATA_DIR/run/children.jsonl: the children of one `dla up`, for the next start to sweep."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def record(self, name: str, pid: int) -> None:
        """Append one started child (its own process group)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"name": name, "pid": pid, "pgid": pid, "start": processes.started_at(pid)}
        with self.path.open("a") as fh:
            fh.write(json.dumps(entry) + "\n")

    def entries(self) -> list[dict[str, object]]:
        """What was recorded (unreadable lines skipped)."""
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text().splitlines():
            with contextlib.suppress(ValueError):
                item = json.loads(line)
                if isinstance(item, dict):
                    out.append(item)
        return out

    def sweep(self) -> list[str]:
        """Kill what a previous `dla up` left running (same pid and start time); clear the file."""
        killed = []
        for e in self.entries():
            pid, pgid, start = e.get("pid"), e.get("pgid"), e.get("start")
            if not isinstance(pid, int) or not isinstance(pgid, int):
                continue
            since = float(start) if isinstance(start, int | float) else None
            members = [
                p
                for p in processes.group_members(pgid)
                if since is None or (processes.started_at(p) or 0) >= since
            ]
            leader_same = since is not None and processes.started_at(pid) == since
            if members and (leader_same or pid not in members):
                kill_group(pgid)
                killed.append(f"{e.get('name')} (pid {pid})")
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        return killed


def kill_tree(root: int, groups: Iterable[int], budget_s: float = 2.0) -> int:
    """SIGKILL the given process groups and every descendant of `root`; reap; count them."""
    killed = 0
    for pgid in groups:
        kill_group(pgid)
    deadline = time.monotonic() + budget_s
    while time.monotonic() < deadline:
        left = processes.live_descendants(root)
        if not left:
            break
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
        reap_adopted()
        time.sleep(0.05)
    reap_adopted()
    return killed
