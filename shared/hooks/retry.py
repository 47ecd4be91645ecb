"""Retry schedule for hard-failed hooks: one place, shared by the runner and the writer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

BACKOFF: tuple[timedelta, ...] = (
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=12),
)
"""Delay before retry number 1, 2, 3, 4 (after the 1st, 2nd, 3rd, 4th failed attempt)."""

MAX_ATTEMPTS = len(BACKOFF) + 1
"""Attempts in all: the first run plus one retry per BACKOFF entry; then the hook gives up."""


def retry_delay(attempt: int) -> timedelta | None:
    """Delay after failed attempt number `attempt` (1-based), or None once attempts are used up."""
    if attempt < 1:
        raise ValueError(f"attempt is 1-based, got {attempt}")
    if attempt > len(BACKOFF):
        return None
    return BACKOFF[attempt - 1]


def next_retry_at(attempt: int, now: datetime | None = None) -> datetime | None:
    """When to retry after failed attempt `attempt`, or None when no retry is left."""
    delay = retry_delay(attempt)
    if delay is None:
        return None
    return (now or datetime.now(UTC)) + delay
