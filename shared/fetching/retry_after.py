"""How long a server asks us to wait: its Retry-After header (RFC 9110 §10.2.3), given in
seconds or as an HTTP date, or lacking one on a rate-limited answer the reset of its window
(`X-RateLimit-Reset`). Read by the fetch and navigate hooks (their failed result's
`retry_after_s`) and by the public-archive clients (shared/external/answer.py)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

WAITING_STATUSES = (429, 503)
"""The answers whose headers can ask for a wait (too many requests, unavailable for now)."""
MAX_WAIT = timedelta(days=1)
"""The longest wait a server's Retry-After makes us keep: a site asking for a week is asked
again after a day (its answer then decides the next wait)."""


def seconds(value: str, now: datetime | None = None) -> float | None:
    """The seconds `value` (a Retry-After header's) asks for, or None when it says nothing
    usable. A date in the past asks for 0."""
    value = value.strip()
    if not value:
        return None
    if value.isascii() and value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)


RESET_HEADERS = ("x-ratelimit-reset", "x-rate-limit-reset", "ratelimit-reset")
"""When a rate limit's window resets: Reddit's and GitHub's spelling, X's, the IETF draft's
(draft-ietf-httpapi-ratelimit-headers: seconds left)."""
EPOCH_AFTER = 1_000_000_000
"""An `X-RateLimit-Reset` above this is a time (Unix seconds: GitHub's, X's), below it the
seconds left (Reddit's)."""


def of_headers(
    headers: Iterable[tuple[str, str]] | Iterable[list[str]], now: datetime | None = None
) -> float | None:
    """The wait a rate-limited response's headers ([name, value] pairs) ask for, or None:
    its Retry-After, else when its rate-limit window resets (RESET_HEADERS)."""
    found = {name.lower(): value for name, value in headers}
    if "retry-after" in found:
        return seconds(found["retry-after"], now)
    reset = next((found[n] for n in RESET_HEADERS if n in found), "").strip()
    try:
        value = float(reset)
    except ValueError:
        return None
    if value != value or value < 0:  # NaN, or no time at all
        return None
    if value > EPOCH_AFTER:
        return max(value - (now or datetime.now(UTC)).timestamp(), 0.0)
    return value


def bounded(wait_s: float) -> timedelta:
    """A server's wait as one we keep: at most MAX_WAIT."""
    return min(timedelta(seconds=max(wait_s, 0.0)), MAX_WAIT)
