"""Web process entry point."""

from __future__ import annotations

import uvicorn

from services.web.app import create_app
from services.web.settings import WebSettings
from shared.logs import setup_logging


def run() -> None:
    """Build settings at start-up and serve the UI."""
    settings = WebSettings()
    setup_logging(settings.log_level, "web")
    app = create_app(settings)
    uvicorn.run(app, host=settings.web_host, port=settings.web_port, log_level="warning")
