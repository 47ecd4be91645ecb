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

A job done with its host (`release`: it told the writer, which may send that host's next job
at once) has only its own work left: reading the page's text, uploads. An ordinary page's
takes well under a second; a job still at it `released_long_after_s` later (a tenth of
`long_after_s`: the text of a page of tens of megabytes takes seconds of CPU) counts as long
from then on, so that work does not keep another host's next job waiting for the slot.
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

    @property
    def released_long_after_s(self) -> float:
        """Seconds after its release (done with its host) a job counts as long."""
        return self.long_after_s / 10


@dataclass
class _Job:
    started: float
    host: str
    released: float | None = None
    """When it was done with its host (from then on it stalls the host no more)."""


@dataclass
class Slots:
    """The jobs running in one worker: when each started, and its host."""

    policy: SlotPolicy
    clock: Callable[[], float] = time.monotonic
    _running: dict[object, _Job] = field(default_factory=dict)

    def start(self, key: object, host: str) -> None:
        """A job started now."""
        self._running[key] = _Job(self.clock(), host)

    def end(self, key: object) -> None:
        """A job ended."""
        self._running.pop(key, None)

    def release(self, key: object) -> None:
        """A job is done with its host (it told the writer, whose next job for that host may
        arrive at once) but still holds its slot while it reads the page's text and uploads:
        it no longer stalls its host, however long it has run, and it is long once it has
        held the slot `released_long_after_s` since."""
        job = self._running.get(key)
        if job is not None and job.released is None:
            job.released = self.clock()

    def _long_at(self, job: _Job) -> float | None:
        """When the job is (or will be) long; None: never."""
        p = self.policy
        if p.long_after_s <= 0:
            return None
        at = job.started + p.long_after_s
        if job.released is not None:
            at = min(at, job.released + p.released_long_after_s)
        return at

    def _is_long(self, job: _Job, now: float) -> bool:
        at = self._long_at(job)
        return at is not None and now >= at

    def long_jobs(self) -> int:
        """How many running jobs are long now."""
        now = self.clock()
        return sum(self._is_long(job, now) for job in self._running.values())

    def free(self) -> int:
        """How many jobs may start now: the slots not held (a long job set aside holds none)."""
        set_aside = min(self.policy.max_long, self.long_jobs())
        return self.policy.concurrency - (len(self._running) - set_aside)

    def stalled(self, host: str) -> bool:
        """Whether a job of `host` is running and long (its other jobs should wait)."""
        now = self.clock()
        return any(
            j.host == host and j.released is None and self._is_long(j, now)
            for j in self._running.values()
        )

    def next_change(self) -> float | None:
        """Seconds until the next running job becomes long (None: none will)."""
        now = self.clock()
        waits = [
            at - now
            for job in self._running.values()
            if (at := self._long_at(job)) is not None and now < at
        ]
        return max(0.0, min(waits)) if waits else None
