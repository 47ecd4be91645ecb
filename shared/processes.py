"""Process facts, through psutil: whether a process lives (a zombie does not), when it
started, its group, its descendants, its command line, its memory. The runner's cleanup, the
supervisor's reaper, the archiver's browser watch and the worker's scratch sweep all ask
here.

Start times are psutil's `create_time()` (seconds since the epoch, from the boot time and the
process's start ticks); `clock()` tells the present time on that same clock, so a start
time compared with it is exact to a tick (the wall clock is not: psutil's boot time is whole
seconds).

The process table (`parents`) is read from /proc by hand: it is scanned twice a second while
captures run, and psutil's objects cost three times the reads.

One fact psutil does not give: a process's resident memory that no file backs (`RssAnon +
RssShmem` of /proc/<pid>/status, which psutil folds into `rss` and `shared`). The renderer
watchdog needs exactly that, so `unshared_resident_bytes` reads it, here. (A hook at its
memory limit reads its own VmData by hand too, `shared.hooks.limits.near_limit`: importing
psutil there could fail for want of the very memory it would report.)
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import psutil

GONE = (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, ProcessLookupError)
"""What asking about a process that ended (or is not ours to read) raises."""
_DEAD = (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)


def clock() -> float:
    """Now, on the clock `started_at` uses (boot time + time since boot)."""
    return psutil.boot_time() + time.clock_gettime(time.CLOCK_BOOTTIME)


def alive(pid: int) -> bool:
    """True if the process exists and is not a zombie."""
    try:
        return psutil.Process(pid).status() not in _DEAD
    except GONE:
        return False


def exists(pid: int) -> bool:
    """True if a process (a zombie too) has this PID."""
    return psutil.pid_exists(pid)


def started_at(pid: int) -> float | None:
    """The process's start time (see the module docstring), None when it is gone."""
    try:
        return psutil.Process(pid).create_time()
    except GONE:
        return None


def parents() -> dict[int, int]:
    """pid -> parent pid of every process (one scan, for several `descendants` calls).

    Read from /proc/<pid>/stat by hand, not through psutil.process_iter: the renderer
    watchdog scans every 0.5 s while captures run, and psutil's objects cost ~3 times the
    CPU of the reads (10 ms against 3.3 ms a scan of 100 processes)."""
    found: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # ended meanwhile
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses
        ppid = int(stat[stat.rfind(b")") + 2 :].split(b" ", 2)[1])
        if ppid:
            found[int(entry.name)] = ppid
    return found


def descendants(root: int, table: dict[int, int] | None = None) -> list[int]:
    """root and every process below it (root first)."""
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


def live_descendants(root: int) -> list[int]:
    """Every live (non-zombie) process below root."""
    try:
        below = psutil.Process(root).children(recursive=True)
    except GONE:
        return []
    return [p.pid for p in below if alive(p.pid)]


def children(parent: int, *, zombies: bool = False) -> list[int]:
    """The processes whose parent is `parent`: live ones, or (zombies=True) only zombies."""
    try:
        below = psutil.Process(parent).children()
    except GONE:
        return []
    return [p.pid for p in below if (not alive(p.pid)) == zombies and exists(p.pid)]


def group_of(pid: int) -> int | None:
    """The process's group id, None when it is gone."""
    try:
        return os.getpgid(pid)
    except (ProcessLookupError, PermissionError):
        return None


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of a process group."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return []
    return [pid for pid in psutil.pids() if group_of(pid) == pgid and alive(pid)]


def cmdline(pid: int) -> list[str]:
    """The process's command line ([] when unknown). A Chromium child that rewrote its
    command line as one space-separated string is split on spaces."""
    try:
        return psutil.Process(pid).cmdline()
    except GONE:
        return []


def command_lines() -> Iterator[tuple[int, list[str]]]:
    """(pid, command line) of every process whose command line is readable."""
    for p in psutil.process_iter(["cmdline"]):
        if p.info["cmdline"]:
            yield p.pid, p.info["cmdline"]


def exe_name(pid: int) -> str:
    """Basename of the process's executable ('' when unknown)."""
    try:
        return os.path.basename(psutil.Process(pid).exe())
    except GONE:
        return ""


def pss_bytes(pids: Iterable[int]) -> int:
    """Sum of the processes' proportional set size; processes that vanished count 0."""
    total = 0
    for pid in pids:
        with contextlib.suppress(*GONE):
            total += psutil.Process(pid).memory_full_info().pss
    return total


def tree_pss_bytes(root: int) -> int:
    """PSS of root and its descendants."""
    return pss_bytes(descendants(root))


def unshared_resident_bytes(pid: int) -> int:
    """RssAnon + RssShmem of a process, 0 when it is gone (read from /proc/<pid>/status:
    psutil has no such figure, see the module docstring)."""
    total = 0
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("RssAnon:", "RssShmem:")):
                total += int(line.split()[1]) * 1024
    return total


def ephemeral_ports() -> range:
    """The ports the kernel gives outgoing connections (and `bind(port 0)`) their local
    port from: a port chosen there for a server to bind later may meanwhile be taken by any
    process's outgoing connection. Linux's default when the file cannot be read."""
    try:
        low, high = (
            int(v) for v in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        )
    except (OSError, ValueError):
        low, high = 32768, 60999
    return range(low, high + 1)


def own_fd_path(fd: int) -> str:
    """A path that opens this process's file descriptor fd anew, at its start (for
    libraries that read only from paths, such as OpenSSL's PEM loaders)."""
    return f"/proc/self/fd/{fd}"


def unix_sockets() -> set[str]:
    """The paths of the unix sockets bound in this network namespace."""
    with contextlib.suppress(psutil.AccessDenied, OSError):
        found: list[object] = [c.laddr for c in psutil.net_connections(kind="unix")]
        return {path for path in found if isinstance(path, str) and path}
    return set()


def kill_tree(root: int) -> None:
    """SIGKILL root and its descendants (those already gone are skipped)."""
    for pid in reversed(descendants(root)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
