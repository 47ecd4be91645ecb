"""Applying capture events: one hook record each, attached to its job, snapshot and link."""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass

from services.writer import binary_inventory, dedup, linkstore
from services.writer.clock import iso, iso_or_none
from services.writer.context import ApplyContext
from shared.hooks.records import (
    ArchiveResultRecord,
    ArtifactRecord,
    BinaryRecord,
    MetadataRecord,
    SnapshotRecord,
    TagRecord,
    TextRecord,
)
from shared.messages import CaptureEvent

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Target:
    """Where an event lands: the snapshot and its link (after merges)."""

    snapshot_id: str
    link_id: int


def resolve_target(ctx: ApplyContext, ev: CaptureEvent) -> Target | None:
    """The event's snapshot and current link; a snapshot unknown here is created."""
    conn = ctx.conn
    row = conn.execute("SELECT link_id FROM snapshots WHERE id = ?", (ev.snapshot_id,)).fetchone()
    if row is not None:
        return Target(ev.snapshot_id, int(row[0]))
    link_id = linkstore.resolve_link_id(conn, ev.link_id)
    if link_id is None:
        return None
    conn.execute(
        "INSERT INTO snapshots (id, link_id, job_id, status, url, created_at, updated_at)"
        " SELECT ?, id, (SELECT id FROM archive_jobs WHERE id = ?), 'started', canonical_url,"
        " ?, ? FROM links WHERE id = ?",
        (ev.snapshot_id, ev.job_id, ctx.now_iso, ctx.now_iso, link_id),
    )
    return Target(ev.snapshot_id, link_id)


def apply_capture_event(ctx: ApplyContext, ev: CaptureEvent) -> bool:
    """Apply one record; False when the event's link is unknown (nothing recorded)."""
    target = resolve_target(ctx, ev)
    if target is None:
        log.warning("capture event %s for unknown link %d dropped", ev.msg_id(), ev.link_id)
        return False
    # Sign of life: the attempt in flight is not silent, so its deadline moves on (written
    # at most once per half deadline).
    deadline = ctx.policy.job_deadline
    ctx.conn.execute(
        "UPDATE archive_jobs SET deadline = ? WHERE id = ? AND status = 'running'"
        " AND attempts = ? AND deadline < ?",
        (iso(ctx.now + deadline), ev.job_id, ev.attempt, iso(ctx.now + deadline / 2)),
    )
    rec = ev.record
    if isinstance(rec, ArchiveResultRecord):
        _archive_result(ctx, target, ev, rec)
    elif isinstance(rec, ArtifactRecord):
        _artifact(ctx, target, rec)
    elif isinstance(rec, MetadataRecord):
        _metadata(ctx.conn, target.link_id, rec, ctx.now_iso)
    elif isinstance(rec, TextRecord):
        linkstore.set_fts(ctx.conn, target.link_id, "extracted_text", rec.text)
    elif isinstance(rec, SnapshotRecord):
        _snapshot(ctx, target, rec)
    elif isinstance(rec, TagRecord):
        ctx.conn.execute(
            "INSERT INTO link_tags (link_id, name, created_at) VALUES (?, ?, ?)"
            " ON CONFLICT DO NOTHING",
            (target.link_id, rec.name, ctx.now_iso),
        )
    elif isinstance(rec, BinaryRecord):
        _binary(ctx, ev, rec)
    return True


def _archive_result(
    ctx: ApplyContext, target: Target, ev: CaptureEvent, rec: ArchiveResultRecord
) -> None:
    """Upsert the result of one hook run; a record of an older attempt/run never wins."""
    attempt = rec.attempt or ev.attempt
    ctx.conn.execute(
        "INSERT INTO archive_results (snapshot_id, plugin, hook, status, retry_at, attempts,"
        " run, seq, exit_code, error_code, output_str, started_at, ended_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (snapshot_id, hook) DO UPDATE SET plugin = excluded.plugin,"
        " status = excluded.status, retry_at = excluded.retry_at, attempts = excluded.attempts,"
        " run = excluded.run, seq = excluded.seq, exit_code = excluded.exit_code,"
        " error_code = excluded.error_code, output_str = excluded.output_str,"
        " started_at = coalesce(excluded.started_at, archive_results.started_at),"
        " ended_at = excluded.ended_at, updated_at = excluded.updated_at"
        " WHERE (excluded.attempts, excluded.run, excluded.seq)"
        " >= (archive_results.attempts, archive_results.run, archive_results.seq)",
        (
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
        ),
    )
    if rec.status == "started":
        ctx.conn.execute(
            "UPDATE snapshots SET status = 'started', updated_at = ? WHERE id = ?"
            " AND status = 'queued'",
            (ctx.now_iso, target.snapshot_id),
        )


def _artifact(ctx: ApplyContext, target: Target, rec: ArtifactRecord) -> None:
    ctx.conn.execute(
        "INSERT INTO archive_artifacts (link_id, snapshot_id, plugin, kind, path, s3_key,"
        " content_type, bytes, sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (s3_key) DO UPDATE SET kind = excluded.kind,"
        " content_type = excluded.content_type, bytes = excluded.bytes,"
        " sha256 = excluded.sha256",
        (
            target.link_id,
            target.snapshot_id,
            rec.plugin,
            rec.kind,
            rec.path,
            rec.s3_key,
            rec.content_type,
            rec.bytes,
            rec.sha256,
            ctx.now_iso,
        ),
    )


_META_FIELDS = ("title", "description", "author", "published_at", "site_name", "language")


def _metadata(conn: sqlite3.Connection, link_id: int, rec: MetadataRecord, now: str) -> None:
    """Merge metadata: a field the record carries replaces the stored one."""
    values = [getattr(rec, f) for f in _META_FIELDS]
    sets = ", ".join(f"{f} = coalesce(excluded.{f}, link_metadata.{f})" for f in _META_FIELDS)
    conn.execute(
        f"INSERT INTO link_metadata (link_id, {', '.join(_META_FIELDS)}, updated_at)"
        f" VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (link_id) DO UPDATE SET {sets},"
        " updated_at = excluded.updated_at",
        (link_id, *values, now),
    )
    if rec.title:
        linkstore.set_fts(conn, link_id, "title", rec.title)


def _snapshot(ctx: ApplyContext, target: Target, rec: SnapshotRecord) -> None:
    conn = ctx.conn
    conn.execute(
        "UPDATE snapshots SET status = coalesce(?, status), title = coalesce(?, title),"
        " final_url = coalesce(?, final_url), updated_at = ? WHERE id = ?",
        (rec.status, rec.title, rec.final_url, ctx.now_iso, target.snapshot_id),
    )
    if rec.title:
        conn.execute(
            "INSERT INTO link_metadata (link_id, title, updated_at) VALUES (?, ?, ?)"
            " ON CONFLICT (link_id) DO UPDATE SET title = coalesce(link_metadata.title,"
            " excluded.title)",
            (target.link_id, rec.title, ctx.now_iso),
        )
        title = conn.execute(
            "SELECT title FROM link_metadata WHERE link_id = ?", (target.link_id,)
        ).fetchone()[0]
        linkstore.set_fts(conn, target.link_id, "title", title)
    if rec.final_url:
        dedup.on_final_url(ctx, target.link_id, rec.final_url)


def _binary(ctx: ApplyContext, ev: CaptureEvent, rec: BinaryRecord) -> None:
    binary_inventory.upsert(ctx, rec.machine or ev.worker.rsplit(":", 1)[0], rec)
