"""The archiver service: runs every capture plugin except the media ones, on `job.capture`,
with a warm browser whose snapshot pages hooks reach over a local socket."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import cast

from services.archiver import fonts
from services.archiver.browser import BrowserBroker, BrowserLimits
from services.archiver.egress import EgressPolicy
from services.archiver.pageserver import page_resources
from services.archiver.pagesession import PageOptions
from services.archiver.settings import ArchiverSettings
from shared.capture.service import plugin_setting_names, plugin_setting_problems, worker_body
from shared.capture.settings import WorkerSettings
from shared.capture.worker_config import SnapshotResources, SnapshotSession
from shared.hooks.config import load_plugin_config
from shared.lifecycle import Service, ServiceContext


def browser_limits(s: ArchiverSettings) -> BrowserLimits:
    """The broker's restart limits from the settings."""
    return BrowserLimits(
        executable=s.browser_executable,
        max_pss_bytes=s.browser_max_pss_mb * 1024 * 1024,
        max_age_s=s.browser_max_age_seconds,
        max_captures=s.browser_max_captures,
        probe_interval_s=s.browser_probe_interval_seconds,
        probe_timeout_s=s.browser_probe_timeout_seconds,
        max_renderer_bytes=s.browser_max_renderer_mb * 1024 * 1024,
        renderer_check_s=s.browser_renderer_check_seconds,
        extra_ca_file=s.browser_extra_ca_file,
    )


TRAFFIC_PLUGIN = "traffic"
"""The plugin that asks for each snapshot's browser WARC (page op `traffic`)."""


def records_traffic(s: ArchiverSettings, env: Mapping[str, str]) -> bool:
    """Whether the egress proxy records the browser's traffic: BROWSER_WARC_MAX_MB is not 0
    and the traffic plugin is there and switched on (with TRAFFIC_ENABLED=false no hook asks
    for the WARC, which would be written only to be deleted)."""
    plugin = s.plugins_dir / TRAFFIC_PLUGIN
    return (
        s.browser_warc_max_mb > 0
        and (plugin / "config.json").is_file()
        and load_plugin_config(plugin).enabled(env)
    )


def page_options(s: ArchiverSettings, env: Mapping[str, str] | None = None) -> PageOptions:
    """How each snapshot's browser context is set up (env: where the plugins' switches are
    read, the process's environment by default)."""
    recorded = records_traffic(s, os.environ if env is None else env)
    return PageOptions(
        user_agent=s.user_agent,
        viewport_width=s.browser_viewport_width,
        viewport_height=s.browser_viewport_height,
        max_response_bytes=s.browser_max_response_mb * 1024 * 1024,
        idle_timeout_s=s.browser_idle_timeout_seconds,
        warc_max_bytes=s.browser_warc_max_mb * 1024 * 1024 if recorded else 0,
        policy=EgressPolicy(
            allow_private=s.allow_private_targets,
            subresource_timeout=s.browser_subresource_timeout_seconds,
            warm_origins=s.browser_warm_origins,
        ),
        cookies_dir=s.cookies_dir or None,
    )


def snapshot_pages(broker: BrowserBroker, s: ArchiverSettings) -> SnapshotSession:
    """Serves each snapshot's page on a socket in its folder while its hooks run."""
    options = page_options(s)

    @asynccontextmanager
    async def session(out_dir: Path) -> AsyncIterator[SnapshotResources]:
        async with page_resources(broker, out_dir, options, s.browser_max_op_seconds) as r:
            yield r

    return session


async def body(ctx: ServiceContext[ArchiverSettings]) -> None:
    """The capture worker loop, with the browser broker around it."""
    s = ctx.settings
    worker_ctx = cast(ServiceContext[WorkerSettings], ctx)  # the worker reads only its part
    if not s.browser_enabled:
        await worker_body(media=False)(worker_ctx)
        return
    missing = await asyncio.to_thread(fonts.missing_scripts)
    fonts.warn_missing(missing)

    async def fonts_check() -> dict[str, object]:
        return fonts.health(missing)

    ctx.add_check(fonts_check)
    async with BrowserBroker(browser_limits(s)) as broker:
        await broker.warm()
        await worker_body(media=False, snapshot_session=snapshot_pages(broker, s))(worker_ctx)


SERVICE = Service("archiver", ArchiverSettings, body, plugin_setting_names, plugin_setting_problems)


def run() -> None:
    """Process entry point."""
    SERVICE.main()
