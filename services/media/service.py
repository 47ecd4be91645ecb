"""The media service: runs only the media plugins (yt-dlp), on `job.media`."""

from __future__ import annotations

from shared.capture.service import plugin_setting_names, plugin_setting_problems, worker_body
from shared.capture.settings import WorkerSettings
from shared.lifecycle import Service

SERVICE = Service(
    "media", WorkerSettings, worker_body(media=True), plugin_setting_names, plugin_setting_problems
)


def run() -> None:
    """Process entry point."""
    SERVICE.main()
