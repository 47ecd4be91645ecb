"""Service process lifecycle: logging, signals, NATS connection, health server, stop event."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from nats.aio.client import Client
from nats.js import JetStreamContext

from shared import bus
from shared.health import all_of, nats_check
from shared.logs import setup_logging
from shared.observability import HealthCheck, HealthServer, serve_health
from shared.setting_names import StartReport, built_or_exit, names_of, near_misses, record_report
from shared.settings import CommonSettings

log = logging.getLogger(__name__)


SettingsT = TypeVar("SettingsT", bound=CommonSettings)


T = TypeVar("T")


async def unless_stopped(work: Coroutine[Any, Any, T], stop: asyncio.Event) -> T | None:
    """`work`'s result, or None once `stop` is set first (the work is then cancelled): a
    service told to stop while it waits for NATS at start stops at once."""
    task = asyncio.ensure_future(work)
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
    if task.done():
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return None


@dataclass(eq=False)
class ServiceContext(Generic[SettingsT]):
    """What a running service gets: its settings (its own class), NATS, and the stop event."""

    name: str
    settings: SettingsT
    nc: Client
    js: JetStreamContext
    stop: asyncio.Event
    checks: list[HealthCheck] = field(default_factory=list)
    """What /healthz checks: NATS, plus whatever the body adds with `add_check`."""

    def add_check(self, check: HealthCheck) -> None:
        """Make /healthz check this too (each check within shared.health's timeout)."""
        self.checks.append(check)

    async def health(self) -> dict[str, object]:
        """Every check of `checks`, combined."""
        return await all_of(*self.checks)()


@dataclass(frozen=True)
class Service(Generic[SettingsT]):
    """How a service process runs: the one entry pattern of every service.

    `settings` builds the service's settings at start-up (its pydantic-settings class);
    `body` runs until `ctx.stop` is set, and may add /healthz checks with `ctx.add_check`.
    ``python -m services.<name>`` calls ``SERVICE.main()``.
    """

    name: str
    settings: Callable[[], SettingsT]
    body: Callable[[ServiceContext[SettingsT]], Awaitable[None]]
    more_setting_names: Callable[[SettingsT], Iterable[str]] = lambda _: ()
    """Settings the service reads besides its settings class's (its plugins', another
    class's): a name in the environment near one of these or the class's is said at start."""

    more_setting_problems: Callable[[SettingsT], StartReport] = lambda _: StartReport()
    """What else is wrong with its settings, for the start report, though the service runs:
    its plugins' refused settings (their hooks fail until they are mended), settings that do
    nothing as given (`refused` and `idle`)."""

    def main(self) -> None:
        """Entry point of the process: build settings (refused ones stop it, a line each:
        shared.setting_names.built_or_exit), set up logging, say what in the environment looks
        like a mistyped setting, leave the start report for `dla up`, serve."""
        settings = built_or_exit(self.settings, self.name)
        setup_logging(settings.log_level, self.name)
        unknown = self.warn_near_misses(settings, os.environ)
        more = self.more_setting_problems(settings)
        report = StartReport(unknown, more.refused, more.idle)
        record_report(settings.data_dir, self.name, report)
        asyncio.run(self.serve(settings))

    def warn_near_misses(self, settings: SettingsT, env: Mapping[str, str]) -> dict[str, str]:
        """Log each name of `env` that is no setting of this service but looks like one
        (shared/setting_names.py); returns them, {name: the setting it looks like}."""
        known = names_of(type(settings)) | set(self.more_setting_names(settings))
        found = near_misses(env, known)
        for given, meant in sorted(found.items()):
            log.warning(
                "%s is not a setting and is ignored: did you mean %s? (%s)", given, meant, self.name
            )
        return found

    async def serve(self, settings: SettingsT) -> None:
        """Connect, start /healthz + /metrics, run the body until SIGTERM/SIGINT, then drain."""
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        nc = await unless_stopped(bus.connect(settings.nats_url, self.name), stop)
        if nc is None:  # told to stop while NATS did not answer yet (it waits for NATS)
            log.info("%s stopped before NATS answered", self.name)
            return
        ctx = ServiceContext(self.name, settings, nc, nc.jetstream(), stop)
        ctx.add_check(nats_check(nc))

        async def declared() -> bool:
            await bus.ensure_streams(ctx.js, settings.nats_replicas)
            return True

        if not await unless_stopped(declared(), stop):
            await nc.close()
            log.info("%s stopped before its streams were declared", self.name)
            return
        health: HealthServer = await serve_health(settings, self.name, ctx.health)
        try:
            await self.body(ctx)
        finally:
            log.info("%s stopping", self.name)
            await health.stop()
            try:
                # flush what we published, then close (drain() waits ~30 s on pull subscriptions)
                await asyncio.wait_for(nc.flush(), timeout=5)
            except Exception as exc:
                log.debug("flush: %s", exc)
            await nc.close()
        log.info("%s stopped", self.name)
