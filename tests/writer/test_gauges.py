"""Gauges the writer derives from its database: per-domain counts, bounded labels."""

from __future__ import annotations

from pathlib import Path

from services.writer.db import transaction
from services.writer.gauges import OTHER, domain_counts_readonly
from testkit.writer_harness import Harness, occ, post


def test_domain_counts_read_beside_an_open_write_transaction(h: Harness, db_path: Path) -> None:
    h.apply(
        post(
            "g1",
            occ("https://a.example/1"),
            occ("https://a.example/2"),
            occ("https://a.example/3"),
            occ("https://b.example/1"),
            occ("https://b.example/2"),
            occ("https://c.example/1"),
        )
    )
    # the writer holds a write transaction: the read-only scan neither waits nor blocks it
    with transaction(h.conn):
        h.conn.execute("UPDATE links SET status = status")
        links, jobs = domain_counts_readonly(db_path, top=2)
    assert links == {"a.example": 3, "b.example": 2, OTHER: 1}
    assert jobs == {("a.example", "queued"): 3, ("b.example", "queued"): 2, (OTHER, "queued"): 1}
