"""Retry schedule for hard-failed hooks: one place, shared by the runner and the writer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

BACKOFF: tuple[timedelta, ...] = (
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=12),
)
"""Delay before retry number 1, 2, 3, 4 (after the 1st, 2nd, 3rd, 4th failed attempt); later
retries (MAX_ATTEMPTS above 5) wait the last step again."""

MAX_ATTEMPTS = len(BACKOFF) + 1
"""Default attempts in all (the writer's MAX_ATTEMPTS setting): the first run plus one retry
per BACKOFF entry; then the hook gives up."""


def retry_delay(attempt: int) -> timedelta:
    """Delay after failed attempt number `attempt` (1-based): BACKOFF, then its last step."""
    if attempt < 1:
        raise ValueError(f"attempt is 1-based, got {attempt}")
    return BACKOFF[min(attempt, len(BACKOFF)) - 1]


def next_retry_at(
    attempt: int, now: datetime | None = None, max_attempts: int = MAX_ATTEMPTS
) -> datetime | None:
    """When to retry after failed attempt `attempt`, or None once `max_attempts` are used."""
    delay = retry_delay(attempt)
    if attempt >= max_attempts:
        return None
    return (now or datetime.now(UTC)) + delay
