"""The archiver service: runs every capture plugin except the media ones, on `job.capture`."""

from __future__ import annotations

from shared.capture.service import worker_body
from shared.capture.settings import WorkerSettings
from shared.lifecycle import Service

SERVICE = Service("archiver", WorkerSettings, worker_body(media=False))


def run() -> None:
    """Process entry point."""
    SERVICE.main()
