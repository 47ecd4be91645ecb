"""The archiver service: runs every capture plugin except the media ones, on `job.capture`."""

from __future__ import annotations

from shared.capture.service import worker_body
from shared.capture.settings import WorkerSettings
from shared.health import s3_check
from shared.lifecycle import main


def run() -> None:
    """Process entry point."""
    main("archiver", WorkerSettings, worker_body(media=False), lambda ctx: s3_check(ctx.settings))
