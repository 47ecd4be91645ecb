"""When an archived link is checked again: at set ages of its archive (LIVENESS_SCHEDULE,
default `1h,1d,7d,30d,90d`), then every last interval (90 days) for good.

The next check is the first age past the last check, so a restart or an outage never fires
the ages it missed one after another: after ten days down, a link last checked at one day is
checked once (overdue, at once) and next at its 30-day age. Each link's ages are shifted by
a fixed jitter of up to 5 % (from its id), so links archived together are not all checked in
the same second.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd])\s*$")
JITTER = 0.05
"""Largest shift of a link's check times, as a share of the age."""


def parse_schedule(text: str) -> tuple[timedelta, ...]:
    """`1h,1d,7d` -> ages, strictly increasing; ValueError with the offending part."""
    ages: list[timedelta] = []
    for part in text.split(","):
        m = _AGE.match(part)
        if m is None:
            raise ValueError(f"{part.strip()!r} is not an age like 90s, 30m, 1h or 7d")
        age = timedelta(seconds=float(m[1]) * _UNITS[m[2]])
        if age <= timedelta(0):
            raise ValueError(f"{part.strip()!r}: an age must be positive")
        if ages and age <= ages[-1]:
            raise ValueError(f"{part.strip()!r}: ages must increase")
        ages.append(age)
    return tuple(ages)


def _jitter(link_id: int) -> float:
    """A fixed share in [0, JITTER) for a link (Knuth's multiplicative hash)."""
    return ((link_id * 2654435761) % 2**32) / 2**32 * JITTER


def age_at(ages: Sequence[timedelta], n: int) -> timedelta:
    """The n-th age (0-based); past the list, the last age repeats as a period."""
    if n < len(ages):
        return ages[n]
    return ages[-1] * (n - len(ages) + 2)


def next_due(
    ages: Sequence[timedelta],
    archived_at: datetime,
    last_checked_at: datetime | None,
    link_id: int,
) -> datetime:
    """When the link is next checked: its first (jittered) age after the last check."""
    after = archived_at if last_checked_at is None else max(last_checked_at, archived_at)
    scale = 1 + _jitter(link_id)
    elapsed = after - archived_at
    n = 0
    while n < len(ages) and ages[n] * scale <= elapsed:
        n += 1
    if n == len(ages):  # past the list: the period repeats, jump straight to the right one
        period = ages[-1] * scale
        n = len(ages) - 1 + int(elapsed / period)
        while age_at(ages, n) * scale <= elapsed:
            n += 1
    return archived_at + age_at(ages, n) * scale


UNKNOWN_RETRY = timedelta(hours=1)
"""After an answer that could not tell, the next check comes sooner: this long after the
first such answer, doubling with each one in a row, at most UNKNOWN_RETRY_MAX."""
UNKNOWN_RETRY_MAX = timedelta(days=1)
MIN_GAP = timedelta(minutes=1)
"""Never two checks of a link closer than this."""


def next_check(
    ages: Sequence[timedelta],
    archived_at: datetime,
    last_checked_at: datetime,
    link_id: int,
    *,
    confirming_until: datetime | None = None,
    unknowns_in_a_row: int = 0,
) -> datetime:
    """When a link just checked is checked next: its next age (`next_due`), sooner when a
    `gone` awaits confirmation (at `confirming_until`, when it would be believed) or when
    the newest answers could not tell (after 1 h, 2 h, 4 h ... up to a day)."""
    due = next_due(ages, archived_at, last_checked_at, link_id)
    if confirming_until is not None:
        due = min(due, confirming_until)
    if unknowns_in_a_row > 0:
        retry = UNKNOWN_RETRY * 2 ** min(unknowns_in_a_row - 1, 8)
        due = min(due, last_checked_at + min(retry, UNKNOWN_RETRY_MAX))
    return max(due, last_checked_at + MIN_GAP)
