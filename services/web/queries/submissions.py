"""What became of a submission or re-archive request, by request id."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, select

from services.web.queries.schema import archive_jobs, submissions


def submission(conn: Connection, request_id: str) -> dict[str, Any] | None:
    """The writer's decision and the job's state, or None while the writer has not decided."""
    row = (
        conn.execute(
            select(
                submissions,
                archive_jobs.c.status.label("job_status"),
                archive_jobs.c.attempts,
                archive_jobs.c.last_error,
                archive_jobs.c.finished_at,
            )
            .select_from(
                submissions.outerjoin(archive_jobs, archive_jobs.c.id == submissions.c.job_id)
            )
            .where(submissions.c.request_id == request_id)
        )
        .mappings()
        .first()
    )
    return None if row is None else dict(row)
