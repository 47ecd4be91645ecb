"""Gauges the writer derives from its database and from JetStream, refreshed by housekeeping."""

from __future__ import annotations

import logging
import sqlite3
from collections import Counter
from pathlib import Path

from nats.js import JetStreamContext

from services.writer.metrics import (
    CONSUMER_ACK_PENDING,
    CONSUMER_PENDING,
    DOMAIN_JOBS,
    DOMAIN_LINKS,
    JOBS,
    TOP_DOMAINS,
)
from shared.subjects import ConsumerSpec

log = logging.getLogger(__name__)

OTHER = "other"


def active_jobs(conn: sqlite3.Connection) -> dict[tuple[str, str], int]:
    """(kind, status) -> jobs queued or running (served by the status index)."""
    rows = conn.execute(
        "SELECT kind, status, count(*) FROM archive_jobs WHERE status IN ('queued', 'running')"
        " GROUP BY kind, status"
    ).fetchall()
    counts = {(k, s): 0 for k in ("capture", "media") for s in ("queued", "running")}
    counts.update({(str(r[0]), str(r[1])): int(r[2]) for r in rows})
    return counts


def domain_counts(
    conn: sqlite3.Connection, top: int = TOP_DOMAINS
) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    """Links per domain and jobs per (domain, status) for the `top` domains by links; every
    other domain is summed under `other`, so the label stays bounded."""
    links: Counter[str] = Counter()
    rows = conn.execute(
        "SELECT domain, count(*) AS n FROM links GROUP BY domain ORDER BY n DESC"
    ).fetchall()
    for i, (domain, n) in enumerate(rows):
        links[str(domain) if i < top else OTHER] += int(n)
    named = {d for d in links if d != OTHER}
    jobs: Counter[tuple[str, str]] = Counter()
    for domain, status, n in conn.execute(
        "SELECT l.domain, j.status, count(*) FROM archive_jobs j JOIN links l ON l.id = j.link_id"
        " GROUP BY l.domain, j.status"
    ):
        jobs[(str(domain) if domain in named else OTHER, str(status))] += int(n)
    return dict(links), dict(jobs)


def domain_counts_readonly(
    db_path: Path, top: int = TOP_DOMAINS
) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    """`domain_counts` on a read-only connection of its own: the scan (about a second per
    million links) reads a WAL snapshot beside the writer instead of holding the writer's
    connection and thread, so batches keep committing meanwhile."""
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5)
    try:
        return domain_counts(conn, top)
    finally:
        conn.close()


def publish_job_gauges(counts: dict[tuple[str, str], int]) -> None:
    for (kind, status), n in counts.items():
        JOBS.labels(kind, status).set(n)


def publish_domain_gauges(links: dict[str, int], jobs: dict[tuple[str, str], int]) -> None:
    """Replace the per-domain series (a domain that left the top N disappears)."""
    DOMAIN_LINKS.clear()
    DOMAIN_JOBS.clear()
    for domain, n in links.items():
        DOMAIN_LINKS.labels(domain).set(n)
    for (domain, status), n in jobs.items():
        DOMAIN_JOBS.labels(domain, status).set(n)


async def publish_consumer_lag(
    js: JetStreamContext, consumers: list[ConsumerSpec]
) -> dict[str, int]:
    """Pending and ack-pending of every durable consumer; returns durable -> total backlog."""
    backlog: dict[str, int] = {}
    for spec in consumers:
        try:
            info = await js.consumer_info(spec.stream.name, spec.durable)
        except Exception as exc:  # the consumer may not exist yet (no worker started)
            log.debug("consumer_info %s: %s", spec.durable, exc)
            continue
        pending = int(info.num_pending or 0)
        ack_pending = int(info.num_ack_pending or 0)
        CONSUMER_PENDING.labels(spec.durable).set(pending)
        CONSUMER_ACK_PENDING.labels(spec.durable).set(ack_pending)
        backlog[spec.durable] = pending + ack_pending
    return backlog
