"""The media service: runs only the media plugins (yt-dlp), on `job.media`."""

from __future__ import annotations

from shared.capture.service import worker_body
from shared.capture.settings import WorkerSettings
from shared.health import s3_check
from shared.lifecycle import main


def run() -> None:
    """Process entry point."""
    main("media", WorkerSettings, worker_body(media=True), lambda ctx: s3_check(ctx.settings))
