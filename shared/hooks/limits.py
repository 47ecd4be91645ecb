"""Resource limits of one hook process: memory and CPU time.

The runner sets them on the hook process before it has done any real work (Python hooks
forked by the hook host: in the forked child, before the hook's first line; exec'd hooks:
prlimit(2) the moment the child exists), so a hostile page can only kill the hook parsing
it. Stdlib only: the hook host imports this module.

- memory: RLIMIT_DATA, the process's writable private memory (heap, anonymous mappings,
  thread stacks: what a parse grows). RLIMIT_AS (all address space) is the textbook choice
  but counts mere reservations: Node/V8 reserves gigabytes it never touches and cannot start
  under 512 MiB of address space; RLIMIT_DATA bounds what is actually writable. An
  allocation past it fails: Python raises MemoryError, C/C++ code gets NULL or
  std::bad_alloc; a Python hook forked by the hook host that dies of any exception while
  near its limit gets a `MemoryError: data memory at ...` last line (near_limit()).
- CPU: RLIMIT_CPU, soft = the limit (SIGXCPU, whose default action ends the process), hard
  = the limit + CPU_GRACE (SIGKILL, for a process that handles SIGXCPU).

Children the hook starts inherit both (each process has its own CPU-time count).
"""

from __future__ import annotations

import math
import re
import resource
import signal
import sys
from dataclasses import dataclass

CPU_GRACE = 5
"""Seconds of CPU between SIGXCPU and SIGKILL."""
MEMORY_SIGNS = re.compile(
    r"^MemoryError\b|Cannot allocate memory|std::bad_alloc|out of memory|"
    r"memory allocation failed|failed to allocate|"
    r"SelectolaxError: Can't parse HTML|"  # lexbor fails a parse only when malloc does
    r"XMLSyntaxError: unknown error",  # libxml2 gave up without saying why: a failed malloc
    re.IGNORECASE,
)
"""What a hook's last stderr line says when an allocation failed under the limit."""


@dataclass(frozen=True)
class HookLimits:
    """Limits for one hook process; 0 means no limit."""

    memory_bytes: int = 512 * 1024 * 1024
    cpu_seconds: float = 0.0

    def as_dict(self) -> dict[str, float]:
        """For the hook host's spawn request."""
        return {"memory_bytes": self.memory_bytes, "cpu_seconds": self.cpu_seconds}


def apply(memory_bytes: int, cpu_seconds: float, pid: int = 0) -> None:
    """Set the limits on process `pid` (0: the calling process, e.g. a forked child before
    the hook runs; else prlimit(2) on a child just spawned)."""
    if memory_bytes > 0:
        resource.prlimit(pid, resource.RLIMIT_DATA, (memory_bytes, memory_bytes))
    if cpu_seconds > 0:
        soft = max(1, math.ceil(cpu_seconds))
        resource.prlimit(pid, resource.RLIMIT_CPU, (soft, soft + CPU_GRACE))


NEAR = 0.8
"""Data memory past this share of its limit when a hook failed: the limit was hit (the
allocation that failed is not counted, so what is left is below the limit)."""


def near_limit() -> str | None:
    """When this process's data memory is within NEAR of its limit: a line saying so
    (libraries report a failed allocation in their own words, or not at all)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_DATA)
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return None
    try:  # this process's own VmData, by hand: no import or object at its memory limit
        with open("/proc/self/status") as f:
            peak = next((int(x.split()[1]) * 1024 for x in f if x.startswith("VmData:")), 0)
    except OSError:
        return None
    if peak < NEAR * soft:
        return None
    mib = 1024 * 1024
    return f"MemoryError: data memory at {peak // mib} MiB of its {soft // mib} MiB limit"


def report_if_near() -> None:
    """Print near_limit()'s line on stderr, last (the runner reads the last line)."""
    line = near_limit()
    if line:
        print(line, file=sys.stderr, flush=True)


def hit(returncode: int, timed_out: bool, stderr_tail: str) -> str | None:
    """Why a hook that ended this way passed a limit ('memory', 'cpu'), None if it did not.
    (A SIGKILL is not taken for one: the runner and the hook host send those too.)"""
    if returncode == -signal.SIGXCPU:
        return "cpu"
    if returncode != 0 and stderr_tail and MEMORY_SIGNS.search(stderr_tail.strip()):
        return "memory"
    return None
