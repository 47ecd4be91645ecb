"""Where database backups live in the bucket (the writer writes them, the web offers them).

Key: ``db-backups/<YYYY-MM-DD>/archive.sqlite3.gz`` (UTC date; a later backup the same day
replaces the earlier one): the publishable database, which the web offers.

Beside it, ``db-backups-private/<YYYY-MM-DD>/private.sqlite3.gz``: the owner's private
rows of the same moment (the audit trail, the S3 removals still queued, ...), which a
restore puts back. No route serves it: its prefix is not under ``PREFIX``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime

PREFIX = "db-backups/"
NAME = "archive.sqlite3.gz"
PRIVATE_PREFIX = "db-backups-private/"
PRIVATE_NAME = "private.sqlite3.gz"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def backup_key(day: datetime) -> str:
    """The object key of the backup of that UTC day."""
    return key_of_date(f"{day.astimezone(UTC):%Y-%m-%d}")


def key_of_date(date: str) -> str:
    """The key of the backup of a YYYY-MM-DD date."""
    return f"{PREFIX}{date}/{NAME}"


def private_key_of_date(date: str) -> str:
    """The key of the private part of the backup of a YYYY-MM-DD date."""
    return f"{PRIVATE_PREFIX}{date}/{PRIVATE_NAME}"


def is_backup_date(value: str) -> bool:
    """True for a YYYY-MM-DD string."""
    return bool(_DATE.match(value))


def backup_dates(keys: Iterable[str]) -> list[str]:
    """The dates (YYYY-MM-DD, oldest first) of the backups among these keys."""
    return sorted(
        parts[1]
        for key in keys
        if len(parts := key.split("/")) == 3
        and f"{parts[0]}/" == PREFIX
        and parts[2] == NAME
        and _DATE.match(parts[1])
    )
