"""The writer's loop: fetch from three durable consumers, apply in batches, ack after commit,
run the scheduler, keep gauges, back up; on SIGTERM drain, back up one last time, exit 0."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

import nats.errors
from nats.aio.msg import Msg
from nats.errors import ConnectionClosedError

from services.writer import backup, evidence_store, external_archives, scheduler, tombstones
from services.writer.apply import BatchResult, Item, apply_batch, is_transient
from services.writer.clock import iso, utcnow
from services.writer.db import open_db, writer_lock
from services.writer.housekeeping import Housekeeping
from services.writer.liveness import dispatch as liveness_dispatch
from services.writer.liveness.budget import HostBudget
from services.writer.metrics import (
    APPLY_SECONDS,
    BATCH_SIZE,
    DISPATCHED,
    LIVENESS_DISPATCHED,
    MESSAGES,
)
from services.writer.puller import WRITER_CONSUMERS, Puller
from services.writer.settings import WriterSettings
from shared import bus
from shared.errors import BusError
from shared.lifecycle import Service, ServiceContext
from shared.messages import Message
from shared.subjects import (
    CAPTURE_DONE,
    CAPTURE_RELEASED,
    CHECK_RESULT,
    CMD_CHECK,
    CMD_REARCHIVE,
    CMD_RETRY,
    CMD_SUBMIT,
    FEED_POST,
    JOB_CHECK,
    JOB_EXTERNAL,
    JOB_TIMESTAMP,
    MODELS,
)

log = logging.getLogger(__name__)

WriterContext = ServiceContext[WriterSettings]

R = TypeVar("R")
WAKES_SCHEDULER = frozenset(
    {CAPTURE_RELEASED, CAPTURE_DONE, CHECK_RESULT, FEED_POST, CMD_SUBMIT, CMD_REARCHIVE,
     CMD_RETRY, CMD_CHECK}
)  # fmt: skip
"""Subjects whose messages may free a job's (or a check's) slot or queue a job due now: the
scheduler runs at once after them, not at its next tick (SCHEDULER_INTERVAL_SECONDS: a new
post's first link waited 0.25 s on average for it)."""


class Writer:
    """One writer process: owns the database connection and the scheduler."""

    def __init__(self, settings: WriterSettings) -> None:
        self.settings = settings
        self.policy = settings.policy()
        self.limits = scheduler.Limits(
            settings.worker_concurrency,
            settings.per_domain_concurrency,
            settings.media_concurrency,
        )
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="writer-db")
        self._conn: sqlite3.Connection | None = None
        self._queue: asyncio.Queue[list[Msg]] = asyncio.Queue(maxsize=2 * len(WRITER_CONSUMERS))
        self._db_error: str | None = None
        self.housekeeping = Housekeeping(settings, self.with_conn)
        self.budget = HostBudget(self.policy.liveness.host_per_hour)
        """Liveness checks dispatched per domain this hour (LIVENESS_HOST_CHECKS_PER_HOUR)."""
        self._wake = asyncio.Event()
        """Set when a slot may have freed (a job released its host or ended): the scheduler
        runs at once instead of at its next interval."""

    @property
    def conn(self) -> sqlite3.Connection:
        """The open database."""
        if self._conn is None:
            raise RuntimeError("database not open")
        return self._conn

    async def db(self, fn: Callable[..., R], *args: Any) -> R:
        """Run fn(*args) on the database thread (one connection, one thread, in order)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, partial(fn, *args))

    async def with_conn(self, fn: Callable[..., R], *args: Any) -> R:
        """Run fn(connection, *args) on the database thread."""
        return await self.db(fn, self.conn, *args)

    async def health(self) -> dict[str, object]:
        """/healthz details: ok while the database works."""
        return {
            "ok": self._conn is not None and self._db_error is None,
            "db": self._db_error or ("ok" if self._conn else "closed"),
            **self.housekeeping.status,
        }

    async def run(self, ctx: WriterContext) -> None:
        """The service body (see shared.lifecycle.serve)."""
        with writer_lock(self.settings.db_path):
            await self.db(backup.remove_leftovers, self.settings.db_path)
            self._conn = await self.open_when_possible(ctx)
            if self._conn is None:
                return
            log.info("database %s open", self.settings.db_path)
            try:
                await self._serve(ctx)
            finally:
                await self.db(_close, self.conn)
                self._conn = None
                self._executor.shutdown(wait=True)

    async def open_when_possible(self, ctx: WriterContext) -> sqlite3.Connection | None:
        """Open, migrate and prepare the database (`_open`), waiting out a lock or a full
        disk (None if stopped meanwhile): another process holding the file must not crash the
        writer at start."""
        delay = 0.5
        while not ctx.stop.is_set():
            try:
                conn: sqlite3.Connection = await self.db(self._open)
                self._db_error = None
                return conn
            except sqlite3.OperationalError as exc:
                if not is_transient(exc):
                    raise
                self._db_error = f"cannot open the database: {exc}"
                log.warning("%s; retrying in %.1fs", self._db_error, delay)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(ctx.stop.wait(), timeout=delay)
                delay = min(delay * 2, 10.0)
        return None

    def _open(self) -> sqlite3.Connection:
        """The database open, migrated, and its taken-down links tombstoned under the current
        key; closed again if any step fails (the next try starts afresh)."""
        conn = open_db(self.settings.db_path)
        try:
            tombstones.sync(conn, self.policy.takedown_key, iso(utcnow()))
        except BaseException:
            conn.close()
            raise
        return conn

    async def _serve(self, ctx: WriterContext) -> None:
        ack_wait = self.settings.writer_ack_wait_seconds
        pullers = [
            await Puller.create(ctx.nc, ctx.js, spec.with_ack_wait(ack_wait))
            for spec in WRITER_CONSUMERS
        ]
        fetchers = [asyncio.create_task(self._fetch_loop(p, ctx.stop)) for p in pullers]
        applier = asyncio.create_task(self._apply_loop(fetchers))
        ticker = asyncio.create_task(self._schedule_loop(ctx))
        keeper = asyncio.create_task(self.housekeeping.run(ctx))
        await ctx.stop.wait()
        self._wake.set()
        log.info("stopping: draining fetched messages")
        await asyncio.gather(*fetchers, return_exceptions=True)
        await applier
        await asyncio.gather(ticker, keeper, return_exceptions=True)
        try:
            await ctx.nc.flush(timeout=5)
        except Exception as exc:
            log.warning("flush of acks failed: %s", exc)
        for puller in pullers:
            with contextlib.suppress(Exception):
                await puller.close()
        if self.settings.backup_interval_seconds > 0:
            await self.housekeeping.backup()

    async def _fetch_loop(self, puller: Puller, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                msgs = await puller.fetch(self.settings.writer_batch_size, timeout=1.0)
            except (ConnectionClosedError, nats.errors.Error) as exc:
                log.warning("fetch from %s failed: %s", puller.spec.durable, exc)
                await asyncio.sleep(0.5)
                continue
            if msgs:
                await self._queue.put(msgs)

    async def _apply_loop(self, fetchers: list[asyncio.Task[None]]) -> None:
        while True:
            try:
                msgs = await asyncio.wait_for(self._queue.get(), timeout=0.2)
            except TimeoutError:
                if all(f.done() for f in fetchers) and self._queue.empty():
                    return
                continue
            while len(msgs) < self.settings.writer_batch_size and not self._queue.empty():
                msgs.extend(self._queue.get_nowait())
            await self.handle(msgs)

    async def handle(self, msgs: list[Msg]) -> None:
        """Validate each message, apply the valid ones in one batch, then ack/term/nak."""
        counts: Counter[tuple[str, str]] = Counter()
        items: list[Item[Msg]] = []
        for msg in msgs:
            message = _validate(msg)
            if message is None:
                await _settle(msg.term(), "term")
                counts[msg.subject, "terminated"] += 1
                continue
            items.append(Item(msg.subject, message, msg))
        if items:
            started = time.perf_counter()
            result = await self.db(apply_batch, self.conn, self.policy, items, utcnow())
            APPLY_SECONDS.observe(time.perf_counter() - started)
            BATCH_SIZE.observe(len(items))
            await self._settle_batch(result, counts)
            if any(item.subject in WAKES_SCHEDULER for item in result.applied):
                self._wake.set()
        for (subject, outcome), n in counts.items():
            MESSAGES.labels(subject, outcome).inc(n)

    async def _settle_batch(
        self, result: BatchResult[Msg], counts: Counter[tuple[str, str]]
    ) -> None:
        """Ack what was applied (or applied before), term the bad, nak the rest."""
        for item in result.applied:
            await _settle(item.handle.ack(), "ack")
            counts[item.subject, "applied"] += 1
        for item in result.duplicates:
            await _settle(item.handle.ack(), "ack")
            counts[item.subject, "duplicate"] += 1
        for item, exc in result.failed:
            log.error(
                "terminating %s message %s: %r; data=%r",
                item.subject,
                item.message.msg_id(),
                exc,
                item.handle.data[:300],
            )
            await _settle(item.handle.term(), "term")
            counts[item.subject, "terminated"] += 1
        for item in result.retry:
            await _settle(item.handle.nak(delay=self.settings.writer_retry_delay_seconds), "nak")
            counts[item.subject, "retried"] += 1
        if result.retry:
            self._db_error = f"{type(result.error).__name__}: {result.error}"
            log.warning(
                "database unavailable (%s); %d messages will be redelivered",
                self._db_error,
                len(result.retry),
            )
            await asyncio.sleep(1.0)
        elif result.applied:
            self._db_error = None  # the database took writes again

    async def _schedule_loop(self, ctx: WriterContext) -> None:
        while not ctx.stop.is_set():
            self._wake.clear()
            await self.schedule_once(ctx)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.settings.scheduler_interval_seconds)

    async def schedule_once(self, ctx: WriterContext) -> None:
        """One scheduler run, its outcome told to /healthz. Only a run that recorded a
        dispatch proves the database takes writes again: an idle run writes nothing, and on a
        full disk it succeeds while every message batch fails."""
        try:
            if await self.tick(ctx):
                self._db_error = None
        except sqlite3.Error as exc:
            log.warning("scheduler: %s", exc)
            if is_transient(exc):
                self._db_error = f"{type(exc).__name__}: {exc}"
        except BusError as exc:
            log.warning("scheduler: %s", exc)

    async def tick(self, ctx: WriterContext) -> int:
        """One scheduler run: record dispatches, publish them, remember what was stored;
        then the same for the liveness checks due, and the timestamp jobs."""
        dispatches = await self.db(scheduler.plan, self.conn, self.policy, self.limits, utcnow())
        published = []
        for d in dispatches:
            try:
                await bus.publish(ctx.js, d.subject, d.job)
            except BusError as exc:
                log.warning("dispatch of job %d failed (retried next tick): %s", d.job.job_id, exc)
                break
            published.append(d.job)
            DISPATCHED.labels(d.subject).inc()
        await self.db(scheduler.mark_published, self.conn, published, utcnow())
        checks = await self.tick_checks(ctx)
        submissions = await self.ask_external_archives(ctx)
        return len(published) + await self.ask_timestamps(ctx) + checks + submissions

    async def ask_timestamps(self, ctx: WriterContext) -> int:
        """Publish the timestamp jobs due."""
        if not self.policy.timestamp_authorities:
            return 0
        jobs = await self.db(
            evidence_store.plan_timestamps, self.conn, utcnow(), self.policy.timestamp_retry
        )
        return await _publish_recorded(ctx, JOB_TIMESTAMP, jobs)

    async def ask_external_archives(self, ctx: WriterContext) -> int:
        """Publish the submissions to the public archives due."""
        jobs = await self.db(
            external_archives.plan, self.conn, utcnow(), self.policy.external_retry
        )
        return await _publish_recorded(ctx, JOB_EXTERNAL, jobs)

    async def tick_checks(self, ctx: WriterContext) -> int:
        """Dispatch the liveness checks due (liveness/dispatch.py), as tick() does jobs."""
        rules = self.policy.liveness
        checks = await self.db(liveness_dispatch.plan, self.conn, rules, self.budget, utcnow())
        sent = []
        for check in checks:
            try:
                await bus.publish(ctx.js, JOB_CHECK, check)
            except BusError as exc:
                log.warning("check of link %d not dispatched (next tick): %s", check.link_id, exc)
                break
            sent.append(check)
        LIVENESS_DISPATCHED.inc(len(sent))
        await self.db(liveness_dispatch.mark_published, self.conn, sent)
        return len(sent)


async def _publish_recorded(ctx: WriterContext, subject: str, jobs: Sequence[Message]) -> int:
    """Publish jobs each recorded first with its next try (a lost one is asked again after
    its backoff): how many were sent before NATS failed, if it did."""
    for n, job in enumerate(jobs):
        try:
            await bus.publish(ctx.js, subject, job)
        except BusError as exc:
            log.warning("%s %s not sent (asked again later): %s", subject, job.msg_id(), exc)
            return n
        DISPATCHED.labels(subject).inc()
    return len(jobs)


def _validate(msg: Msg) -> Message | None:
    """The message's model, or None (logged with an excerpt) when it violates it."""
    model = MODELS.get(msg.subject)
    if model is None:
        log.error("no model for subject %s; data=%r", msg.subject, msg.data[:300])
        return None
    try:
        return model.model_validate_json(msg.data)
    except ValueError as exc:
        log.error(
            "invalid %s message: %s; data=%r",
            msg.subject,
            str(exc).replace("\n", " ")[:500],
            msg.data[:300],
        )
        return None


async def _settle(action: Any, what: str) -> None:
    """Await an ack/nak/term; a lost one only causes a redelivery, which changes nothing."""
    try:
        await action
    except Exception as exc:
        log.warning("%s failed: %s", what, exc)


def _close(conn: sqlite3.Connection) -> None:
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


async def body(ctx: WriterContext) -> None:
    """Service body: one Writer for the process; /healthz also asks it about the database."""
    writer = Writer(ctx.settings)
    ctx.add_check(writer.health)
    await writer.run(ctx)


SERVICE = Service("writer", WriterSettings, body)
