"""The liveness settings as the writer's rules (from WriterSettings.policy())."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from services.writer.liveness.schedule import parse_schedule
from services.writer.liveness.verdict import Windows

DEFAULT_SCHEDULE = "1h,1d,7d,30d,90d"


@dataclass(frozen=True)
class LivenessRules:
    """When links are checked, how many checks run, when a `gone` is believed."""

    enabled: bool = True
    """LIVENESS_ENABLED: dispatch checks (the schedule is kept either way)."""
    ages: tuple[timedelta, ...] = field(default_factory=lambda: parse_schedule(DEFAULT_SCHEDULE))
    """LIVENESS_SCHEDULE: ages of the first archive at which a link is checked."""
    windows: Windows = field(default_factory=Windows)
    """LIVENESS_CONFIRM_SECONDS, LIVENESS_CONFIRM_TOMBSTONE_SECONDS."""
    concurrency: int = 8
    """LIVENESS_CONCURRENCY: checks in flight across every archiver."""
    per_domain: int = 1
    """PER_DOMAIN_CONCURRENCY: checks of one registrable domain in flight."""
    host_per_hour: int = 60
    """LIVENESS_HOST_CHECKS_PER_HOUR: checks of one registrable domain dispatched in an hour
    (0: no limit)."""
    deadline: timedelta = timedelta(minutes=15)
    """JOB_DEADLINE_SECONDS: a check with no result after this long is dispatched again."""
