"""A link's evidence: its newest capture's manifest (fingerprint), WACZ, verdict and
timestamps, as the writer last recorded them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, select

from services.web.queries.prepared import Prepared, param
from services.web.queries.schema import evidence, evidence_timestamps

_NEWEST = Prepared(
    select(evidence)
    .where(evidence.c.link_id == param("link_id"))
    .order_by(evidence.c.created_at.desc(), evidence.c.snapshot_id.desc())
    .limit(1)
)
_STAMPS = Prepared(
    select(evidence_timestamps)
    .where(evidence_timestamps.c.snapshot_id == param("snapshot_id"))
    .order_by(evidence_timestamps.c.authority)
)


def of_link(
    conn: Connection, link_id: int, artifacts: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The newest capture's evidence with its files' artifact rows, or None."""
    row = _NEWEST.first(conn, link_id=link_id)
    if row is None:
        return None
    by_key = {a["s3_key"]: a for a in artifacts}
    row["manifest"] = by_key.get(row["manifest_key"])
    row["wacz"] = by_key.get(row["wacz_key"]) if row["wacz_key"] else None
    stamps = [
        t for t in _STAMPS.rows(conn, snapshot_id=row["snapshot_id"])
        if t["fingerprint"] == row["fingerprint"]
    ]  # fmt: skip
    for t in stamps:
        t["token"] = by_key.get(t["token_key"]) if t["token_key"] else None
        t["chain"] = by_key.get(t["chain_key"]) if t["chain_key"] else None
    row["timestamps"] = stamps
    return row
