"""Applying capture events: each one or more hook records, attached to the event's job,
snapshot and link.

Each record type has one handler (``RECORD_HANDLERS``); this module writes
``archive_results`` and ``archive_result_attempts`` itself and every other table through the
module that owns it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from services.writer import (
    artifacts,
    binary_inventory,
    dedup,
    linkstore,
    media,
    moderation,
    posts,
    scheduler,
    text_history,
    transitions,
)
from services.writer.clock import iso_or_none
from services.writer.context import ApplyContext
from services.writer.metrics import HOOK_RESULTS, LOGGED_OUT
from shared.hooks.error_codes import what_of
from shared.hooks.records import (
    ArchiveResultRecord,
    ArtifactRecord,
    BinaryRecord,
    FileRecord,
    MediaRecord,
    MetadataRecord,
    PostRecord,
    ProgressRecord,
    SnapshotRecord,
    TagRecord,
    TextRecord,
)
from shared.links.domains import registrable_domain
from shared.messages import CaptureEvent

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Target:
    """Where an event lands: the snapshot and its link (after merges)."""

    snapshot_id: str
    link_id: int


def resolve_target(ctx: ApplyContext, ev: CaptureEvent) -> Target | None:
    """The event's snapshot and current link; a snapshot unknown here is adopted."""
    conn = ctx.conn
    row = conn.execute("SELECT link_id FROM snapshots WHERE id = ?", (ev.snapshot_id,)).fetchone()
    if row is not None:
        return Target(ev.snapshot_id, int(row[0]))
    link_id = linkstore.resolve_link_id(conn, ev.link_id)
    if link_id is None:
        return None
    transitions.adopt_snapshot(conn, ev.snapshot_id, ev.job_id, link_id, ctx.now_iso)
    return Target(ev.snapshot_id, link_id)


def apply_capture_event(ctx: ApplyContext, ev: CaptureEvent) -> bool:
    """Apply an event's records in order; False when the event's link is unknown (nothing
    recorded)."""
    target = resolve_target(ctx, ev)
    if target is None:
        log.warning("capture event %s for unknown link %d dropped", ev.msg_id(), ev.link_id)
        return False
    if moderation.is_taken_down(ctx.conn, target.link_id):
        # captured before the takedown reached the worker: record nothing, remove the files
        keys = [r.s3_key for r in ev.records if isinstance(r, ArtifactRecord) and r.s3_key]
        moderation.remove_objects(ctx.conn, target.link_id, keys, ctx.now_iso)
        return True
    # Sign of life: the attempt in flight is not silent, so its deadline moves on.
    transitions.heartbeat(
        ctx.conn,
        ev.job_id,
        ev.attempt,
        ctx.now,
        ctx.policy.job_deadline,
        ctx.policy.media_job_deadline,
    )
    if ev.seq == 0 and ev.run > 1:  # a redelivered run starts: it talks to the host again
        transitions.rehold_host(ctx.conn, ev.job_id, ev.attempt, ev.run)
    for record in ev.records:
        RECORD_HANDLERS[type(record)](ctx, target, ev, record)
    return True


def _archive_result(
    ctx: ApplyContext, target: Target, ev: CaptureEvent, rec: ArchiveResultRecord
) -> None:
    """Upsert the current result of one hook (archive_results) and the result of this attempt
    (archive_result_attempts, one row per attempt, kept); an older attempt/run never wins."""
    attempt = rec.attempt or ev.attempt
    values = (
        target.snapshot_id,
        rec.plugin,
        rec.hook,
        rec.status,
        iso_or_none(rec.retry_at),
        attempt,
        ev.run,
        ev.seq,
        rec.exit_code,
        rec.error_code,
        rec.output_str,
        iso_or_none(rec.started_at),
        iso_or_none(rec.ended_at),
        ctx.now_iso,
    )
    for table, attempts, key in (
        ("archive_results", "attempts", "snapshot_id, hook"),
        ("archive_result_attempts", "attempt", "snapshot_id, hook, attempt"),
    ):
        ctx.conn.execute(
            f"INSERT INTO {table} (snapshot_id, plugin, hook, status, retry_at, {attempts},"
            " run, seq, exit_code, error_code, output_str, started_at, ended_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            f" ON CONFLICT ({key}) DO UPDATE SET plugin = excluded.plugin,"
            f" status = excluded.status, retry_at = excluded.retry_at,"
            f" {attempts} = excluded.{attempts}, run = excluded.run, seq = excluded.seq,"
            " exit_code = excluded.exit_code, error_code = excluded.error_code,"
            " output_str = excluded.output_str,"
            f" started_at = coalesce(excluded.started_at, {table}.started_at),"
            " ended_at = excluded.ended_at, updated_at = excluded.updated_at"
            f" WHERE (excluded.{attempts}, excluded.run, excluded.seq)"
            f" >= ({table}.{attempts}, {table}.run, {table}.seq)",
            values,
        )
    if rec.status == "started" or rec.started_at is not None:
        # its first hook started (a quick hook's final result is the only word of its start)
        transitions.start(ctx.conn, target.snapshot_id, ctx.now_iso)
    if rec.status in ("succeeded", "failed", "skipped"):
        HOOK_RESULTS.labels(rec.plugin, rec.status, rec.error_code or "").inc()
    if rec.status in ("failed", "partial") and what_of(rec.error_code) == "LOGGED_OUT":
        site = ctx.conn.execute("SELECT domain FROM links WHERE id = ?", (target.link_id,))
        domain = registrable_domain(str((site.fetchone() or [""])[0]))
        LOGGED_OUT.labels(rec.plugin, domain).inc()
        log.warning("%s: the session for %s expired (%s)", rec.plugin, domain, rec.error_code)
    if rec.status == "failed":
        scheduler.on_failure(ctx.conn, target.link_id, rec.error_code, ctx.now, rec.retry_after_s)


def _artifact(ctx: ApplyContext, target: Target, ev: CaptureEvent, rec: ArtifactRecord) -> None:
    artifacts.record(
        ctx.conn, target.link_id, target.snapshot_id, rec, ctx.now_iso, (ev.attempt, ev.run)
    )


def _metadata(ctx: ApplyContext, target: Target, ev: CaptureEvent, rec: MetadataRecord) -> None:
    """Merge metadata: a field the record carries replaces the stored one."""
    values = {f: getattr(rec, f) for f in linkstore.METADATA_FIELDS}
    linkstore.set_metadata(ctx.conn, target.link_id, values, ctx.now_iso)
    if rec.has_video:
        media.on_page_video(ctx.conn, target.link_id, ctx.policy, ctx.now_iso)


def _text(ctx: ApplyContext, target: Target, ev: CaptureEvent, rec: TextRecord) -> None:
    """The capture's text becomes the link's search text; the one it replaces, an older
    capture's, stays searchable (text_history)."""
    text_history.keep_replaced(
        ctx.conn, target.link_id, "extracted_text", rec.text, target.snapshot_id
    )
    linkstore.set_fts(ctx.conn, target.link_id, "extracted_text", rec.text)


def _snapshot(ctx: ApplyContext, target: Target, ev: CaptureEvent, rec: SnapshotRecord) -> None:
    private = bool(rec.logged_in) and not ctx.policy.publish_logged_in_captures
    transitions.report_snapshot(ctx.conn, target.snapshot_id, rec.status, rec.title,
                                rec.final_url, ctx.now_iso, private_session=private)  # fmt: skip
    if rec.title:
        linkstore.default_title(ctx.conn, target.link_id, rec.title, ctx.now_iso)
    if rec.final_url:
        dedup.on_final_url(ctx, target.link_id, rec.final_url)


def _tag(ctx: ApplyContext, target: Target, ev: CaptureEvent, rec: TagRecord) -> None:
    linkstore.add_tag(ctx.conn, target.link_id, rec.name, ctx.now_iso)


def _progress(ctx: ApplyContext, target: Target, ev: CaptureEvent, rec: ProgressRecord) -> None:
    media.record_progress(ctx.conn, ev.job_id, rec, ctx.now_iso)


def _media(ctx: ApplyContext, target: Target, ev: CaptureEvent, rec: MediaRecord) -> None:
    media.record_media(ctx.conn, target.link_id, ev.job_id, target.snapshot_id, rec, ctx.now_iso)


def _post(ctx: ApplyContext, target: Target, ev: CaptureEvent, rec: PostRecord) -> None:
    posts.record_post(ctx.conn, target.link_id, target.snapshot_id, rec, ctx.now_iso)


def _binary(ctx: ApplyContext, target: Target, ev: CaptureEvent, rec: BinaryRecord) -> None:
    binary_inventory.upsert(ctx, rec.machine or ev.worker.rsplit(":", 1)[0], rec)


def _file(ctx: ApplyContext, target: Target, ev: CaptureEvent, rec: FileRecord) -> None:
    """A hook's facts about its file: the worker folds them into the Artifact record it sends
    after the upload, so there is nothing to store from this one."""


RecordHandler = Callable[[ApplyContext, Target, CaptureEvent, Any], None]

RECORD_HANDLERS: dict[type[Any], RecordHandler] = {
    ArchiveResultRecord: _archive_result,
    ArtifactRecord: _artifact,
    MetadataRecord: _metadata,
    TextRecord: _text,
    SnapshotRecord: _snapshot,
    TagRecord: _tag,
    BinaryRecord: _binary,
    FileRecord: _file,
    ProgressRecord: _progress,
    MediaRecord: _media,
    PostRecord: _post,
}
"""The handler of each hook record type (every type of ``shared.hooks.records.HookRecord``)."""
