"""What every apply function gets: the connection, the policy and the batch's clock."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import datetime

from services.writer.clock import iso
from services.writer.job_policy import Policy


@dataclass(frozen=True)
class ApplyContext:
    """One batch's view: the open transaction, the rules, and 'now' (one value per batch)."""

    conn: sqlite3.Connection
    policy: Policy
    now: datetime
    now_iso: str = field(init=False)
    """now as stored."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "now_iso", iso(self.now))
