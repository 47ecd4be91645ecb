"""Which links the public sees, and which count as archives: the one place that says so.

Every page, JSON twin, export and feed builds its link queries on ``public()`` (the link
may be shown at all: not taken down) and ``listed()`` (it is listed as an archive). The
takedown filter is in ``public()`` and nowhere else.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, func

from services.web.queries.schema import links

LISTED_STATUSES = ("archived", "failed", "partial")
"""Link statuses listed as archives. ``pending`` (never tried) and ``skipped`` (policy or
cache decided not to capture) are not archives, good or bad."""

listed_at = func.coalesce(links.c.last_archived_at, links.c.first_seen_at)
"""When a listed link was archived (or, if it never was, first seen): the listing order.
Migration 0004 indexes exactly this expression (``links_listed``)."""


def public() -> ColumnElement[bool]:
    """Links anyone may see: all but those an admin took down (issue 15)."""
    return links.c.taken_down_at.is_(None)


def listed(*, status_index: bool = True) -> ColumnElement[bool]:
    """Links listed as archives on the home page, in search, exports and the feed.

    ``status_index=False`` spells the status test so SQLite cannot use the ``links_status``
    index for it (``status || ''``): the listing page must walk ``links_listed`` in order
    instead of fetching every listed link by status and sorting them all."""
    status = links.c.status if status_index else links.c.status.concat("")
    return and_(public(), status.in_(LISTED_STATUSES))
