"""Web process entry point: the common service lifecycle, serving the app with uvicorn.

``shared.lifecycle.Service`` connects NATS, serves the usual /healthz + /metrics on
METRICS_PORT and sets the stop event on SIGTERM; the body opens S3, builds the app over
that state and serves it on WEB_HOST:WEB_PORT until the stop event.
"""

from __future__ import annotations

import asyncio

import uvicorn
import uvloop

from services.web.admin import AdminSettings
from services.web.app import create_app, freeze_startup_objects
from services.web.connections import open_storage
from services.web.settings import WebSettings
from services.web.state import WebState
from services.web.workers import serve_workers
from shared.health import s3_check
from shared.lifecycle import Service, ServiceContext
from shared.setting_names import StartReport, names_of


async def body(ctx: ServiceContext[WebSettings]) -> None:
    """Serve the UI until the service is told to stop (in worker processes when
    WEB_WORKERS > 1: ``workers.py``)."""
    ctx.add_check(s3_check(ctx.settings))
    if ctx.settings.web_workers > 1:
        await serve_workers(ctx)
        return
    state = WebState.of(ctx.settings)
    state.nc = ctx.nc
    async with open_storage(state):
        config = uvicorn.Config(
            create_app(ctx.settings, state),
            host=ctx.settings.web_host,
            port=ctx.settings.web_port,
            log_level="warning",
            access_log=False,
        )
        server = uvicorn.Server(config)
        freeze_startup_objects()
        serving = asyncio.create_task(server.serve())
        stopping = asyncio.create_task(ctx.stop.wait())
        await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
        server.should_exit = True
        stopping.cancel()
        await serving


SERVICE = Service(
    "web",
    WebSettings,
    body,
    more_setting_names=lambda _: names_of(AdminSettings),
    more_setting_problems=lambda s: StartReport(idle=s.idle()),
)


def run() -> None:
    """Process entry point (on uvloop: a faster event loop for the pages)."""
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    SERVICE.main()
