"""Checks dispatched per registrable domain within the last hour (LIVENESS_HOST_CHECKS_PER_HOUR).

Kept in the writer's memory: it is a politeness bound, not a record, so a restarted writer
starts a fresh hour (at worst one hour's worth more for a domain, once)."""

from __future__ import annotations

from collections import deque

HOUR = 3600.0


class HostBudget:
    """How many checks each domain may still have this hour."""

    def __init__(self, per_hour: int) -> None:
        self.per_hour = per_hour
        """0: no limit."""
        self._sent: dict[str, deque[float]] = {}

    def _window(self, site: str, now: float) -> deque[float]:
        sent = self._sent.setdefault(site, deque())
        while sent and sent[0] <= now - HOUR:
            sent.popleft()
        return sent

    def allows(self, site: str, now: float) -> bool:
        """Whether one more check of `site` may be dispatched now."""
        return self.per_hour <= 0 or len(self._window(site, now)) < self.per_hour

    def take(self, site: str, now: float) -> None:
        """A check of `site` was dispatched now."""
        if self.per_hour > 0:
            self._window(site, now).append(now)

    def free_at(self, site: str, now: float) -> float:
        """When `site` may have its next check (now when it may already)."""
        sent = self._window(site, now)
        if self.per_hour <= 0 or len(sent) < self.per_hour:
            return now
        return sent[len(sent) - self.per_hour] + HOUR
