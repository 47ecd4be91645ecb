"""Stop requests from signals, without locks: the handler only counts, a self-pipe wakes the loop.

A handler that takes a lock (``threading.Event.set()``) deadlocks when a second signal lands
while the main thread holds that lock — what happened when SIGTERM reached the process group
of `make up` (make forwards it, so `dla up` gets two). Here the handler touches integers only;
``signal.set_wakeup_fd`` writes a byte to a pipe so ``wait()`` wakes at once.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time
from types import FrameType

STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Signals that ask `dla up` to stop (SIGHUP also comes as the parent-death signal)."""

REPEAT_WINDOW_S = 1.0
"""Copies of one request arrive together (a group kill plus make's forward): signals closer
than this to the previous one are the same request; a later one asks to hurry."""


class StopRequested(BaseException):
    """Raised by the handler while the stack is starting (nothing to wait for yet)."""


class StopSignals:
    """Counts stop requests; `wait()` sleeps until one arrives or the timeout passes."""

    def __init__(self) -> None:
        self.requests = 0
        """Distinct stop requests seen (1 = stop gracefully, 2+ = hurry)."""
        self.urgent = False
        """True after SIGHUP: the parent died or the terminal went away; stop fast."""
        self.interruptible = False
        """While True the first request raises StopRequested in the main thread."""
        self._last = -1e9
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)

    def install(self) -> None:
        """Install the handlers and the wake-up pipe (main thread only)."""
        for sig in STOP_SIGNALS:
            signal.signal(sig, self._handle)
        signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        now = time.monotonic()
        if signum == signal.SIGHUP:
            self.urgent = True
        if self.requests == 0 or now - self._last >= REPEAT_WINDOW_S:
            self.requests += 1
        self._last = now
        if self.interruptible:
            self.interruptible = False
            raise StopRequested(signal.Signals(signum).name)

    @property
    def stopping(self) -> bool:
        """True once any stop was asked for."""
        return self.requests > 0 or self.urgent

    @property
    def hurry(self) -> bool:
        """True when the stop should not wait for graceful exits any more."""
        return self.requests >= 2

    def wait(self, timeout: float) -> bool:
        """Sleep until a signal arrives or `timeout` passes; True if a stop was asked for."""
        if not self.stopping:
            with contextlib.suppress(InterruptedError):
                select.select([self._read], [], [], timeout)
        with contextlib.suppress(BlockingIOError):
            while os.read(self._read, 512):
                pass
        return self.stopping
