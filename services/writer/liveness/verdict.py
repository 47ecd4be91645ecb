"""The verdict rule: is an archived link's original still there? (the one owner of it)

Each liveness check is an observation with one of three answers: `present`, `gone` (only on
positive evidence: HTTP 404/410, or the platform's own tombstone, such as Reddit's
`[removed]`, an X tombstone, a suspended account) or `unknown` (429, 5xx, timeouts, DNS
failures, captchas, login walls, anything else). From a link's observations, oldest first:

- `gone` once consecutive `gone` observations with no `present` between span at least the
  confirmation window: `confirm_tombstone` when any of them is the platform's own tombstone,
  else `confirm` (a bare 404/410 may be a moved page or a passing fault). `unknown`
  observations neither count towards gone nor break the run; one `present` resets it. Once
  confirmed, later `unknown` answers do not undo it; a `present` does.
- `present` when the newest observation is `present`.
- `unknown` otherwise: the newest answer was `unknown`, or a `gone` not yet confirmed.

`since` is when the current state began (for `gone`: the first `gone` of the confirmed run,
the date a reader sees as "deleted at source on ..."); `reason` is the evidence of the
newest observation that supports the state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from shared.platforms.outcome import Answer


@dataclass(frozen=True)
class Observation:
    """One check of the original, as stored."""

    at: datetime
    """When the check was made."""
    answer: Answer
    """What it found."""
    tombstone: bool = False
    """A `gone` answer from the platform's own evidence (not a bare 404/410)."""
    reason: str | None = None
    """The evidence in words: `HTTP 404`, `removed by a moderator`, `account suspended`, ..."""


@dataclass(frozen=True)
class LivenessVerdict:
    """What a reader is told about the original."""

    state: Answer
    since: datetime | None
    """When the state began (None when nothing was observed)."""
    reason: str | None
    last_checked_at: datetime | None
    confirming_until: datetime | None = None
    """For an unconfirmed `gone` run: when it would be confirmed if the next checks still
    find it gone (the scheduler checks again then)."""
    tombstone: bool = False
    """A `gone` verdict resting on the platform's own tombstone (not a bare 404/410)."""


@dataclass(frozen=True)
class Windows:
    """How long a `gone` run must span before it is believed."""

    confirm: timedelta = timedelta(seconds=259200)
    """A bare HTTP 404/410 (LIVENESS_CONFIRM_SECONDS)."""
    confirm_tombstone: timedelta = timedelta(seconds=3600)
    """The platform's own tombstone (LIVENESS_CONFIRM_TOMBSTONE_SECONDS)."""


def verdict(observations: Sequence[Observation], windows: Windows) -> LivenessVerdict:
    """The verdict of a link's observations (any order; sorted by time here)."""
    obs = sorted(observations, key=lambda o: o.at)
    if not obs:
        return LivenessVerdict("unknown", None, None, None)
    last_checked = obs[-1].at
    last_present = max((i for i, o in enumerate(obs) if o.answer == "present"), default=-1)
    after = obs[last_present + 1 :]
    gone = [o for o in after if o.answer == "gone"]
    if gone:
        tombstone = any(o.tombstone for o in gone)
        confirmed_at = gone[0].at + (windows.confirm_tombstone if tombstone else windows.confirm)
        if gone[-1].at >= confirmed_at:
            return LivenessVerdict(
                "gone", gone[0].at, _reason(gone), last_checked, tombstone=tombstone
            )
        return LivenessVerdict(
            "unknown",
            after[0].at,
            f"{_reason(gone)}: not yet confirmed",
            last_checked,
            confirming_until=confirmed_at,
        )
    if not after:
        return LivenessVerdict("present", _present_since(obs, last_present), None, last_checked)
    return LivenessVerdict("unknown", after[0].at, after[-1].reason, last_checked)


def _reason(gone: list[Observation]) -> str:
    """The newest tombstone's words win over a bare status."""
    for o in reversed(gone):
        if o.tombstone and o.reason:
            return o.reason
    return gone[-1].reason or "not found"


def _present_since(obs: list[Observation], last_present: int) -> datetime:
    """The start of the newest unbroken stretch without a `gone` before the last present."""
    start = last_present
    while start > 0 and obs[start - 1].answer != "gone":
        start -= 1
    first = next(i for i in range(start, last_present + 1) if obs[i].answer == "present")
    return obs[first].at
