"""Service process lifecycle: logging, signals, NATS connection, health server, stop event."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from nats.aio.client import Client
from nats.js import JetStreamContext

from shared import bus
from shared.health import all_of, nats_check
from shared.logs import setup_logging
from shared.observability import HealthCheck, HealthServer, serve_health
from shared.settings import CommonSettings

log = logging.getLogger(__name__)


@dataclass
class ServiceContext:
    """What a running service gets: its settings, NATS, and the stop event."""

    name: str
    settings: CommonSettings
    nc: Client
    js: JetStreamContext
    stop: asyncio.Event


async def serve(
    name: str,
    settings: CommonSettings,
    body: Callable[[ServiceContext], Awaitable[None]],
    check: Callable[[ServiceContext], HealthCheck] | None = None,
) -> None:
    """Connect, start /healthz + /metrics, run body until SIGTERM/SIGINT, then drain.

    /healthz checks NATS plus whatever `check` adds (each within shared.health's timeout)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    nc = await bus.connect(settings.nats_url, name)
    ctx = ServiceContext(name, settings, nc, nc.jetstream(), stop)
    await bus.ensure_streams(ctx.js, settings.nats_replicas)
    checks = [nats_check(nc), *([check(ctx)] if check else [])]
    health: HealthServer = await serve_health(settings, name, all_of(*checks))
    try:
        await body(ctx)
    finally:
        log.info("%s stopping", name)
        await health.stop()
        try:
            # flush what we published, then close (drain() waits ~30 s on pull subscriptions)
            await asyncio.wait_for(nc.flush(), timeout=5)
        except Exception as exc:
            log.debug("flush: %s", exc)
        await nc.close()
    log.info("%s stopped", name)


def main(
    name: str,
    settings_factory: Callable[[], CommonSettings],
    body: Callable[[ServiceContext], Awaitable[None]],
    check: Callable[[ServiceContext], HealthCheck] | None = None,
) -> None:
    """Entry point of a service process: build settings at start-up, then serve."""
    settings = settings_factory()
    setup_logging(settings.log_level, name)
    asyncio.run(serve(name, settings, body, check))
