"""Stats: links by status, per-domain counts, failures by error code, the job backlog."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, case, distinct, func, select

from services.web.queries.liveness import gone_by_platform
from services.web.queries.schema import archive_jobs, archive_results, links, snapshots
from services.web.queries.visibility import public
from shared.hooks.error_codes import opted_out

TOP_DOMAINS = 50


def stats(conn: Connection) -> dict[str, Any]:
    """Everything the stats page shows."""
    by_status: dict[str, int] = {}
    declined = 0  # failed links whose page asked not to be archived (the code table decides)
    for r in conn.execute(
        select(links.c.status, links.c.last_error_code, func.count().label("n"))
        .where(public())
        .group_by(links.c.status, links.c.last_error_code)
    ):
        by_status[r.status] = by_status.get(r.status, 0) + r.n
        if r.status == "failed" and opted_out(r.last_error_code):
            declined += r.n
    archived = func.sum(case((links.c.status == "archived", 1), else_=0))
    failed = func.sum(case((links.c.status == "failed", 1), else_=0))
    domains = [
        {"domain": r.domain, "links": r.n, "archived": r.archived or 0, "failed": r.failed or 0}
        for r in conn.execute(
            select(
                links.c.domain,
                func.count().label("n"),
                archived.label("archived"),
                failed.label("failed"),
            )
            .where(public(), links.c.status != "skipped")
            .group_by(links.c.domain)
            .order_by(func.count().desc(), links.c.domain)
            .limit(TOP_DOMAINS)
        )
    ]
    failures = [
        {
            "error_code": r.error_code or "(none)",
            "results": r.n,
            "links": r.links,
            "declined": opted_out(r.error_code),
        }
        for r in conn.execute(
            select(
                archive_results.c.error_code,
                func.count().label("n"),
                func.count(distinct(snapshots.c.link_id)).label("links"),
            )
            .select_from(
                archive_results.join(snapshots, snapshots.c.id == archive_results.c.snapshot_id)
            )
            .where(archive_results.c.status == "failed")
            .group_by(archive_results.c.error_code)
            .order_by(func.count().desc())
            .limit(100)
        )
    ]
    jobs = {
        r.status: {"jobs": r.n, "oldest": r.oldest}
        for r in conn.execute(
            select(
                archive_jobs.c.status,
                func.count().label("n"),
                func.min(archive_jobs.c.enqueued_at).label("oldest"),
            )
            .where(archive_jobs.c.status.in_(("queued", "running")))
            .group_by(archive_jobs.c.status)
        )
    }
    backlog = {
        "queued": jobs.get("queued", {}).get("jobs", 0),
        "running": jobs.get("running", {}).get("jobs", 0),
        "oldest_queued_at": jobs.get("queued", {}).get("oldest"),
    }
    return {
        "links": {"total": sum(by_status.values()), "by_status": by_status, "declined": declined},
        "domains": domains,
        "failures": failures,
        "backlog": backlog,
        "gone_by_platform": gone_by_platform(conn),
    }


def queued_jobs(conn: Connection) -> int:
    """Jobs waiting for a worker (the health page's backlog)."""
    return int(
        conn.execute(select(func.count()).where(archive_jobs.c.status == "queued")).scalar_one()
    )
