"""Restart policy of supervised processes (services and engines alike).

A process that exits is started again after a delay that doubles with each restart in a
row (1 s, 2 s, 4 s ... 60 s at most); once it has run for HEALTHY_RESET_S without exiting,
the count starts over, so a crash a day later waits 1 s again, not a minute.
"""

from __future__ import annotations

import logging
import signal
import time
from dataclasses import dataclass, field

from shared.setting_names import EXIT_CONFIG

log = logging.getLogger(__name__)

MAX_DELAY_S = 60.0
HEALTHY_RESET_S = 120.0
"""Running this long without exiting counts as healthy: the backoff starts over."""


def exit_reason(returncode: int | None) -> str:
    """Why a process ended, from its return code, in words."""
    if returncode is None:
        return "exited (status unknown)"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name}"
    if returncode == EXIT_CONFIG:
        return f"stopped at start: a setting was refused (exit code {returncode}; why: its log)"
    return f"exited with code {returncode}"


@dataclass
class Restarts:
    """The restart bookkeeping of one supervised process."""

    name: str
    count: int = 0
    """Restarts in a row (since the last healthy stretch)."""
    total: int = 0
    next_at: float = 0.0
    started_at: float = field(default_factory=time.monotonic)
    healthy_after_s: float = HEALTHY_RESET_S

    def delay(self) -> float:
        """The wait before the next restart."""
        return min(MAX_DELAY_S, 2.0**self.count)

    def running(self, now: float) -> None:
        """The process is alive: after a healthy stretch the backoff starts over."""
        if self.count and now - self.started_at >= self.healthy_after_s:
            log.info(
                "%s ran %.0fs without exiting: restart delay back to 1s",
                self.name,
                now - self.started_at,
            )
            self.count = 0

    def exited(self, returncode: int | None, now: float) -> bool:
        """The process is gone: True when it is time to start it again (logs why, once)."""
        if self.next_at == 0.0:
            self.next_at = now + self.delay()
            log.warning(
                "%s %s after %.0fs; restarting in %.0fs",
                self.name,
                exit_reason(returncode),
                now - self.started_at,
                self.delay(),
            )
        if now < self.next_at:
            return False
        self.count += 1
        self.total += 1
        self.next_at = 0.0
        self.started_at = now
        return True
