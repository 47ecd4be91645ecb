"""/healthz and /metrics for every service, served by uvicorn inside the service's loop."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path

import uvicorn
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from shared.settings import CommonSettings

log = logging.getLogger(__name__)

HealthCheck = Callable[[], Awaitable[dict[str, object]]]


async def metrics_endpoint(_: Request) -> Response:
    """Prometheus exposition of this process's registry."""
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)


def health_endpoint(service: str, check: HealthCheck) -> Callable[[Request], Awaitable[Response]]:
    """A /healthz handler: 200 with the check's details, 503 when the check says not ok."""

    async def healthz(_: Request) -> Response:
        try:
            details = await check()
        except Exception as exc:
            details = {"ok": False, "error": str(exc)}
        ok = bool(details.get("ok", True))
        return JSONResponse(
            {"service": service, **details, "ok": ok}, status_code=200 if ok else 503
        )

    return healthz


class HealthServer:
    """A running /healthz + /metrics server."""

    def __init__(self, server: uvicorn.Server, task: asyncio.Task[None], port: int) -> None:
        self._server = server
        self._task = task
        self.port = port

    async def stop(self) -> None:
        """Stop serving."""
        self._server.should_exit = True
        await asyncio.wait([self._task], timeout=5)


async def serve_health(settings: CommonSettings, service: str, check: HealthCheck) -> HealthServer:
    """Start /healthz and /metrics on settings.metrics_host:metrics_port (0 = a free port)."""
    app = Starlette(
        routes=[
            Route("/healthz", health_endpoint(service, check)),
            Route("/metrics", metrics_endpoint),
        ]
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((settings.metrics_host, settings.metrics_port))
    port = int(sock.getsockname()[1])
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    log.info("%s: /healthz and /metrics on http://%s:%d", service, settings.metrics_host, port)
    run_dir = settings.data_dir / "run"
    _write_port_file(run_dir / f"{service}.port", port)
    return HealthServer(server, task, port)


def _write_port_file(path: Path, port: int) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{port}\n")
    except OSError as exc:
        log.warning("cannot write %s: %s", path, exc)
