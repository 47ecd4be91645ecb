"""Idempotent, batched application of bus messages to the database (``processed_messages``).

Every message's ``Nats-Msg-Id`` is recorded in ``processed_messages`` in the transaction
that applies it: a redelivered message (lost ack, crash between commit and ack) finds its id
there and changes nothing. A batch is one ``BEGIN IMMEDIATE ... COMMIT``; when it fails on
one message, the batch is rolled back and applied one message per transaction, so a bad
message never blocks the ones behind it.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

from services.writer.binary_inventory import apply_worker_binaries
from services.writer.capture_results import apply_capture_event
from services.writer.commands import apply_rearchive, apply_submit
from services.writer.context import ApplyContext
from services.writer.db import transaction
from services.writer.done import apply_capture_done, apply_host_released
from services.writer.evidence_store import apply_evidence_report, apply_timestamp_result
from services.writer.external_archives import apply_external_result
from services.writer.feed_posts import apply_feed_gap, apply_feed_post
from services.writer.job_policy import Policy
from services.writer.liveness.check_results import apply_check_command, apply_check_result
from services.writer.moderation import (
    apply_exclude,
    apply_include,
    apply_retry,
    apply_takedown,
    apply_undo,
)
from shared.messages import (
    CaptureDone,
    CaptureEvent,
    CheckCommand,
    EvidenceReport,
    ExcludeCommand,
    ExternalArchiveResult,
    FeedGap,
    FeedPost,
    HostReleased,
    IncludeCommand,
    LivenessResult,
    Message,
    RearchiveCommand,
    RetryCommand,
    SubmitCommand,
    TakedownCommand,
    TimestampResult,
    UndoTakedownCommand,
    WorkerBinaries,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

_HANDLERS: dict[type[Message], Callable[[ApplyContext, Any], object]] = {
    FeedPost: apply_feed_post,
    FeedGap: apply_feed_gap,
    CaptureEvent: apply_capture_event,
    CaptureDone: apply_capture_done,
    HostReleased: apply_host_released,
    SubmitCommand: apply_submit,
    RearchiveCommand: apply_rearchive,
    TakedownCommand: apply_takedown,
    ExcludeCommand: apply_exclude,
    IncludeCommand: apply_include,
    RetryCommand: apply_retry,
    UndoTakedownCommand: apply_undo,
    WorkerBinaries: apply_worker_binaries,
    EvidenceReport: apply_evidence_report,
    TimestampResult: apply_timestamp_result,
    ExternalArchiveResult: apply_external_result,
    LivenessResult: apply_check_result,
    CheckCommand: apply_check_command,
}

# Result codes of SQLite that mean "the disk or the lock, not the message": retry later.
_TRANSIENT_CODES = frozenset({5, 6, 7, 8, 10, 13, 14, 15})  # BUSY LOCKED NOMEM READONLY
# IOERR FULL CANTOPEN PROTOCOL


def is_transient(exc: BaseException) -> bool:
    """True for a database error that is about the environment (locked, full disk, I/O)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return (code & 0xFF) in _TRANSIENT_CODES
    return isinstance(exc, sqlite3.OperationalError) and (
        "locked" in str(exc) or "disk" in str(exc)
    )


@dataclass
class Item(Generic[T]):
    """One validated message in a batch, with an opaque handle (the NATS message)."""

    subject: str
    message: Message
    handle: T


@dataclass
class BatchResult(Generic[T]):
    """What to do with each message of a batch once the database is done with it."""

    applied: list[Item[T]] = field(default_factory=list)
    duplicates: list[Item[T]] = field(default_factory=list)
    failed: list[tuple[Item[T], BaseException]] = field(default_factory=list)
    """Bad messages: applying them raised; terminate them."""
    retry: list[Item[T]] = field(default_factory=list)
    """Not applied because of the environment (locked, disk full): redeliver later."""
    error: BaseException | None = None
    """The transient error that caused `retry`."""


def apply_one(ctx: ApplyContext, item: Item[Any]) -> bool:
    """Apply one message inside the caller's transaction; False if it was applied before."""
    cur = ctx.conn.execute(
        "INSERT INTO processed_messages (msg_id, subject, applied_at) VALUES (?, ?, ?)"
        " ON CONFLICT (msg_id) DO NOTHING",
        (item.message.msg_id(), item.subject, ctx.now_iso),
    )
    if cur.rowcount == 0:
        return False
    handler = _HANDLERS[type(item.message)]
    handler(ctx, item.message)
    return True


def forget_processed(conn: sqlite3.Connection, cutoff: str) -> None:
    """Drop the ids of messages applied before `cutoff` (past any redelivery window)."""
    conn.execute("DELETE FROM processed_messages WHERE applied_at < ?", (cutoff,))


def apply_batch(
    conn: sqlite3.Connection, policy: Policy, items: Sequence[Item[T]], now: datetime
) -> BatchResult[T]:
    """Apply items in one transaction, falling back to one transaction each on failure."""
    result: BatchResult[T] = BatchResult()
    if not items:
        return result
    ctx = ApplyContext(conn, policy, now)
    try:
        with transaction(conn):
            fresh = [apply_one(ctx, item) for item in items]
    except Exception as exc:
        if is_transient(exc):
            result.retry.extend(items)
            result.error = exc
            return result
        log.warning("batch of %d failed (%s); applying one by one", len(items), exc)
        return _one_by_one(ctx, items)
    for item, new in zip(items, fresh, strict=True):
        (result.applied if new else result.duplicates).append(item)
    return result


def _one_by_one(ctx: ApplyContext, items: Sequence[Item[T]]) -> BatchResult[T]:
    result: BatchResult[T] = BatchResult()
    for n, item in enumerate(items):
        try:
            with transaction(ctx.conn):
                new = apply_one(ctx, item)
        except Exception as exc:
            if is_transient(exc):
                result.retry.extend(items[n:])
                result.error = exc
                return result
            log.error("cannot apply %s %s: %r", item.subject, item.message.msg_id(), exc)
            result.failed.append((item, exc))
            continue
        (result.applied if new else result.duplicates).append(item)
    return result
