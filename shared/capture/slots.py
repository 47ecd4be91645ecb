"""Which running jobs hold a worker's capture slots, so that one stalling host cannot starve
the others.

A worker runs at most `concurrency` jobs in its slots. A job still running after `long_after_s`
is most likely waiting on a server that stalls (ordinary pages take a few seconds; a stall
lasts until the idle, header or navigation timeouts): it is set aside, no longer holding a
slot, so the slot takes the next job. At most `max_long` jobs are set aside at once (a job
past that keeps its slot), which bounds what runs at once to `concurrency + max_long`. A
job fetched while a job of its host (registrable domain, the writer's per-domain unit) is
long is deferred (the worker naks it with a delay; JetStream redelivers it): a host whose
pages stall waits, the other hosts' jobs take the slots.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from shared.links.domains import registrable_domain


def host_of(url: str) -> str:
    """The unit a stall is held against: the registrable domain of the URL's host."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        host = ""
    return registrable_domain(host)


@dataclass(frozen=True)
class SlotPolicy:
    """How many jobs a worker runs, and when a job counts as long."""

    concurrency: int
    long_after_s: float = 0.0
    """Seconds after which a running job is long (0 = never: every job keeps its slot)."""
    max_long: int = 0
    """Long jobs set aside from the slots at once."""


@dataclass
class Slots:
    """The jobs running in one worker: when each started, and its host."""

    policy: SlotPolicy
    clock: Callable[[], float] = time.monotonic
    _running: dict[object, tuple[float, str]] = field(default_factory=dict)

    def start(self, key: object, host: str) -> None:
        """A job started now."""
        self._running[key] = (self.clock(), host)

    def end(self, key: object) -> None:
        """A job ended."""
        self._running.pop(key, None)

    def release(self, key: object) -> None:
        """A job is done with its host (it told the writer, whose next job for that host may
        arrive at once) but still holds its slot while it uploads: it no longer stalls its
        host, however long it has run."""
        if key in self._running:
            started, _ = self._running[key]
            self._running[key] = (started, "")

    def _is_long(self, started: float, now: float) -> bool:
        return self.policy.long_after_s > 0 and now - started >= self.policy.long_after_s

    def long_jobs(self) -> int:
        """How many running jobs are long now."""
        now = self.clock()
        return sum(self._is_long(started, now) for started, _ in self._running.values())

    def free(self) -> int:
        """How many jobs may start now: the slots not held (a long job set aside holds none)."""
        set_aside = min(self.policy.max_long, self.long_jobs())
        return self.policy.concurrency - (len(self._running) - set_aside)

    def stalled(self, host: str) -> bool:
        """Whether a job of `host` is running and long (its other jobs should wait)."""
        now = self.clock()
        return any(h == host and self._is_long(s, now) for s, h in self._running.values())

    def next_change(self) -> float | None:
        """Seconds until the next running job becomes long (None: none will)."""
        if self.policy.long_after_s <= 0:
            return None
        now = self.clock()
        waits = [
            started + self.policy.long_after_s - now
            for started, _ in self._running.values()
            if not self._is_long(started, now)
        ]
        return max(0.0, min(waits)) if waits else None
