"""The writer's housekeeping: consumer-lag, job and domain gauges, the newest backup's
time, pruning old message ids, backups when due, purging taken-down links whose undo window
ended, and removing the S3 objects of taken-down links."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

from services.writer import backup, gauges, metrics, moderation, removals
from services.writer.apply import forget_processed
from services.writer.clock import iso, utcnow
from services.writer.db import transaction
from services.writer.metrics import BACKUPS, LAST_BACKUP
from services.writer.puller import WRITER_CONSUMERS
from services.writer.settings import WriterSettings
from shared.errors import StorageError
from shared.lifecycle import ServiceContext
from shared.subjects import CONSUMERS as ALL_CONSUMERS

log = logging.getLogger(__name__)

HOUSEKEEPING_S = 5.0
"""Seconds between housekeeping rounds (gauges)."""


class Housekeeping:
    """Runs beside the writer's apply loop and scheduler, on the same database thread."""

    def __init__(
        self,
        settings: WriterSettings,
        with_conn: Callable[..., Awaitable[Any]],
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.settings = settings
        self.clock = clock
        """The time undo windows are compared with."""
        self.with_conn = with_conn
        """Runs fn(connection, *args) on the writer's database thread."""
        self.status: dict[str, object] = {}
        """The last backlog and job counts, for /healthz."""

    async def run(self, ctx: ServiceContext[WriterSettings]) -> None:
        """Every HOUSEKEEPING_S until stopped: gauges; per their intervals: domain gauges,
        pruning, backups."""
        interval = self.settings.backup_interval_seconds
        next_backup = time.monotonic() + interval
        if interval > 0 and not await self._backed_up_today():
            next_backup = time.monotonic() + HOUSEKEEPING_S
        next_prune = time.monotonic()
        next_domains = time.monotonic()
        metrics.initialise()
        await self._note_latest_backup()
        while not ctx.stop.is_set():
            await self._update_gauges(ctx)
            if time.monotonic() >= next_domains:
                next_domains = time.monotonic() + self.settings.domain_stats_interval_seconds
                await self._update_domain_gauges()
            if time.monotonic() >= next_prune:
                next_prune = time.monotonic() + 3600
                await self._prune()
            if interval > 0 and time.monotonic() >= next_backup:
                next_backup = time.monotonic() + interval
                await self.backup()
            await self.purge_taken_down()
            await self._remove_taken_down()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ctx.stop.wait(), HOUSEKEEPING_S)

    async def _update_gauges(self, ctx: ServiceContext[WriterSettings]) -> None:
        backlog = await gauges.publish_consumer_lag(ctx.js, list(ALL_CONSUMERS))
        try:
            counts = await self.with_conn(gauges.active_jobs)
        except sqlite3.Error as exc:
            log.warning("job gauges: %s", exc)
            counts = {}
        gauges.publish_job_gauges(counts)
        jobs: dict[str, int] = {}
        for (_, status), n in counts.items():
            jobs[status] = jobs.get(status, 0) + n
        writer_backlog = {
            c.durable: backlog[c.durable] for c in WRITER_CONSUMERS if c.durable in backlog
        }
        self.status = {"backlog": writer_backlog, "jobs": jobs}

    async def _update_domain_gauges(self) -> None:
        try:
            links, jobs = await asyncio.to_thread(
                gauges.domain_counts_readonly, self.settings.db_path
            )
        except sqlite3.Error as exc:
            log.warning("domain gauges: %s", exc)
            return
        gauges.publish_domain_gauges(links, jobs)

    async def _note_latest_backup(self) -> None:
        try:
            when = await backup.latest_time(self.settings)
        except StorageError as exc:
            log.warning("cannot read the newest backup's time: %s", exc)
            return
        if when is not None:
            LAST_BACKUP.set(when.timestamp())

    async def _prune(self) -> None:
        cutoff = iso(utcnow() - timedelta(days=self.settings.processed_retention_days))
        try:
            await self.with_conn(_prune_processed, cutoff)
        except sqlite3.Error as exc:
            log.warning("pruning processed_messages: %s", exc)

    async def purge_taken_down(self) -> None:
        """Purge the taken-down links whose undo window ended (their objects are then queued
        for removal)."""
        try:
            await self.with_conn(moderation.purge_due, self.clock())
        except sqlite3.Error as exc:
            log.warning("purging taken-down links: %s (will retry)", exc)

    async def _remove_taken_down(self) -> None:
        try:
            await removals.remove_pending(self.with_conn, self.settings)
        except (StorageError, sqlite3.Error, ValueError) as exc:
            log.warning("removing objects of taken-down links: %s (will retry)", exc)

    async def _backed_up_today(self) -> bool:
        try:
            return await backup.has_backup(self.settings)
        except StorageError as exc:
            log.warning("cannot check for today's backup: %s", exc)
            return True

    async def backup(self) -> None:
        """One backup to S3 now (failures are logged and counted, never raised)."""
        try:
            await asyncio.wait_for(backup.backup(self.settings), timeout=300)
            BACKUPS.labels("ok").inc()
            LAST_BACKUP.set_to_current_time()
        except (StorageError, sqlite3.Error, OSError, TimeoutError) as exc:
            BACKUPS.labels("failed").inc()
            log.error("database backup failed: %s", exc)


def _prune_processed(conn: sqlite3.Connection, cutoff: str) -> None:
    with transaction(conn):
        forget_processed(conn, cutoff)
