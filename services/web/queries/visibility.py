"""Which links the public sees, and which count as archives: the one place that says so.

Every page, JSON twin, export and feed builds its link queries on ``public()`` (the link
may be shown at all) and ``listed()`` (it is listed as an archive). A takedown filter, when
one exists, belongs in ``public()`` and nowhere else.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, func, true

from services.web.queries.schema import links

LISTED_STATUSES = ("archived", "failed", "partial")
"""Link statuses listed as archives. ``pending`` (never tried) and ``skipped`` (policy or
cache decided not to capture) are not archives, good or bad."""

listed_at = func.coalesce(links.c.last_archived_at, links.c.first_seen_at)
"""When a listed link was archived (or, if it never was, first seen): the listing order.
Migration 0003 indexes exactly this expression."""


def public() -> ColumnElement[bool]:
    """Links anyone may see (today: all of them)."""
    return true()


def listed() -> ColumnElement[bool]:
    """Links listed as archives on the home page, in search, exports and the feed."""
    return and_(public(), links.c.status.in_(LISTED_STATUSES))
