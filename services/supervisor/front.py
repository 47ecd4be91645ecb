"""The front process of `dla up`: what the shell (or make, or a process manager) started.

It forwards stop signals to the supervisor it forked and exits with the supervisor's code,
holding the data directory's lock meanwhile. `run_up` forks the supervisor from the whole
CLI, then the front exec's this module: a fresh interpreter that imports only os, signal
and sys (~8 MB), not a forked copy of the CLI that would keep the original of every page the
supervisor touched (~45 MB PSS for the stack's life). The pid stays the same, so the
supervisor's parent-death signal and `dla up`'s pid in DATA_DIR/run/stack.json still name
it; the stop signals stay blocked across the exec until the handlers are in place.

Usage (from `run_up` only): ``python -m services.supervisor.front SUPERVISOR_PID LOCK_FD
SIGNALS_TO_FORWARD OLD_MASK``, the last two comma-separated signal numbers.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterable
from types import FrameType

EXIT_FAILED = 1


def _numbers(arg: str) -> list[int]:
    return [int(n) for n in arg.split(",") if n]


def forward_until_exit(
    child: int, lock_fd: int, forwarded: Iterable[int], old_mask: Iterable[int]
) -> int:
    """Forward the `forwarded` signals to child until it exits, then drop the lock (its
    file emptied, its descriptor closed); the child's exit code."""

    def forward(signum: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    for sig in forwarded:
        signal.signal(sig, forward)
    signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
    _, status = os.waitpid(child, 0)  # (a signal's handler runs; the wait goes on: PEP 475)
    with contextlib.suppress(OSError):
        os.ftruncate(lock_fd, 0)
    os.close(lock_fd)
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else EXIT_FAILED


def main(argv: list[str]) -> int:
    """`python -m services.supervisor.front SUPERVISOR_PID LOCK_FD SIGNALS OLD_MASK`."""
    return forward_until_exit(int(argv[0]), int(argv[1]), _numbers(argv[2]), _numbers(argv[3]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
