"""Process trees from /proc: descendants of a PID and their proportional memory (PSS)."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterable, Iterator
from pathlib import Path

PROC = Path("/proc")


def read_each(name: str) -> Iterator[tuple[int, bytes]]:
    """(pid, contents of /proc/<pid>/<name>) of every process whose file is readable."""
    for entry in os.scandir(PROC):
        if not entry.name.isdigit():
            continue
        try:
            data = (PROC / entry.name / name).read_bytes()
        except OSError:
            continue
        yield int(entry.name), data


def parents() -> dict[int, int]:
    """pid -> parent pid of every process visible in /proc."""
    out: dict[int, int] = {}
    for pid, stat in read_each("stat"):
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2 :].split()
        out[pid] = int(fields[1])
    return out


def descendants(root: int, table: dict[int, int] | None = None) -> list[int]:
    """root and every process below it."""
    table = parents() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, ppid in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        if pid in table or pid == root:
            found.append(pid)
            todo.extend(children.get(pid, []))
    return found


def pss_bytes(pids: Iterable[int]) -> int:
    """Sum of the processes' PSS (smaps_rollup); processes that vanished count 0."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            for line in (PROC / str(pid) / "smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
                    break
    return total


def tree_pss_bytes(root: int) -> int:
    """PSS of root and its descendants."""
    return pss_bytes(descendants(root))


def exe_name(pid: int) -> str:
    """Basename of the process's executable ('' when unknown)."""
    try:
        return os.path.basename(os.readlink(PROC / str(pid) / "exe"))
    except OSError:
        return ""


def cmdline(pid: int) -> bytes:
    """The process's NUL-separated command line (b"" when unknown)."""
    try:
        return (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return b""


def kill_tree(root: int) -> None:
    """SIGKILL root and its descendants (those already gone are skipped)."""
    for pid in reversed(descendants(root)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
