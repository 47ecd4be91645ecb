"""Which captures may be replayed: the one place that says so.

A WACZ of a link the public may see, unless it is private (a capture made with the site's
cookies, ``private_file``): those are never replayed, not even for an admin (the admin
downloads the file instead). The replay origin serves no other file.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, select

from services.web.queries.links import private_file
from services.web.queries.schema import archive_artifacts, links, snapshots
from services.web.queries.visibility import public

WACZ_KIND = "wacz"
_capture = snapshots.alias("capture")
"""The WACZ's snapshot (an alias: ``private_file`` asks about ``snapshots`` on its own)."""


def replayable_wacz(conn: Connection, artifact_id: int) -> dict[str, Any] | None:
    """The WACZ with this id (``id``, ``link_id``, ``s3_key``, ``bytes``, ``snapshot_id``) and
    the page it holds (``page_url``: the capture's final URL, else the URL it was asked
    for, else the link's; ``captured_at``), or None when it may not be replayed."""
    stmt = (
        select(
            archive_artifacts.c.id,
            archive_artifacts.c.link_id,
            archive_artifacts.c.s3_key,
            archive_artifacts.c.bytes,
            archive_artifacts.c.snapshot_id,
            archive_artifacts.c.created_at.label("captured_at"),
            _capture.c.final_url,
            _capture.c.url,
            links.c.canonical_url,
            private_file,
        )
        .select_from(
            archive_artifacts.join(links, links.c.id == archive_artifacts.c.link_id).outerjoin(
                _capture, _capture.c.id == archive_artifacts.c.snapshot_id
            )
        )
        .where(
            archive_artifacts.c.id == artifact_id,
            archive_artifacts.c.kind == WACZ_KIND,
            public(),
        )
    )
    row = conn.execute(stmt).mappings().first()
    if row is None or not may_replay({"kind": WACZ_KIND, "private": row["private"]}):
        return None
    found = dict(row)
    found["page_url"] = row["final_url"] or row["url"] or row["canonical_url"]
    for name in ("final_url", "url", "canonical_url", "private"):
        del found[name]
    return found


def may_replay(artifact: dict[str, Any]) -> bool:
    """True for an artifact row (of a link the public sees) that may be replayed."""
    return artifact["kind"] == WACZ_KIND and not artifact["private"]


def newest_replayable(artifacts: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The newest WACZ of a link's artifacts (oldest first) that may be replayed."""
    return next((a for a in reversed(artifacts) if may_replay(a)), None)
