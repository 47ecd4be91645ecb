"""Timestamps as stored in the database: ISO 8601 UTC text that sorts like time."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def iso(dt: datetime) -> str:
    """A datetime as stored: UTC, microseconds, 'Z' (naive values are taken as UTC)."""
    aware = dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)
    return aware.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def iso_or_none(dt: datetime | None) -> str | None:
    """iso(dt), or None."""
    return None if dt is None else iso(dt)


def parse(text: str) -> datetime:
    """A stored timestamp back as an aware datetime."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
