"""Web request metrics by route template (bounded labels: never the raw path)."""

from __future__ import annotations

import os
import time

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.multiprocess import MultiProcessCollector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

REQUESTS = Counter(
    "dla_web_requests_total",
    "Web requests by route template, method and status",
    ["route", "method", "status"],
)
LATENCY = Histogram(
    "dla_web_request_seconds",
    "Time to answer a web request, by route template",
    ["route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)


def exposition() -> bytes:
    """What /metrics answers: this process's metrics; with worker processes
    (``PROMETHEUS_MULTIPROC_DIR``, see workers.py), every worker's counts summed, and the
    process metrics of the service process (whose start time is the service's, whichever
    worker answers the scrape)."""
    path = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not path:
        return generate_latest(REGISTRY)
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path)  # type: ignore[no-untyped-call]
    ProcessCollector(registry=registry, pid=os.getppid)
    PlatformCollector(registry=registry)
    return generate_latest(registry)


METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"})


class RequestMetrics:
    """ASGI middleware counting each request under its route's path template."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or "(unmatched)"
            method = scope.get("method", "GET") if scope.get("method") in METHODS else "OTHER"
            REQUESTS.labels(template, method, str(status)).inc()
            LATENCY.labels(template).observe(time.perf_counter() - started)
