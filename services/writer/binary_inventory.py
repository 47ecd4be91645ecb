"""Binaries per machine, and hooks skipped for a missing binary re-queued once it appears."""

from __future__ import annotations

import json
import logging
from collections import defaultdict

from services.writer import transitions
from services.writer.context import ApplyContext
from shared.hooks.records import BinaryRecord
from shared.messages import WorkerBinaries

log = logging.getLogger(__name__)


def upsert(ctx: ApplyContext, machine: str, rec: BinaryRecord) -> None:
    """Record (or refresh) one binary as seen on one machine."""
    ctx.conn.execute(
        "INSERT INTO binaries (machine, name, abspath, version, sha256, binprovider, status,"
        " first_seen_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (machine, name, abspath, version, sha256) DO UPDATE"
        " SET binprovider = excluded.binprovider, status = excluded.status,"
        " last_seen_at = excluded.last_seen_at",
        (
            machine,
            rec.name,
            rec.abspath or "",
            rec.version or "",
            rec.sha256 or "",
            rec.binprovider,
            rec.status,
            ctx.now_iso,
            ctx.now_iso,
        ),
    )


def apply_worker_binaries(ctx: ApplyContext, msg: WorkerBinaries) -> None:
    """Record a worker's binaries; re-queue hooks that were skipped for one now present."""
    for rec in msg.binaries:
        upsert(ctx, msg.machine, rec)
    present = {b.name for b in msg.binaries if b.status == "succeeded" and b.abspath}
    if present:
        requeue_missing(ctx, present)


def requeue_missing(ctx: ApplyContext, present: set[str]) -> int:
    """Queue again, on their own job, the hooks skipped with E_BINARY_MISSING for a binary in
    `present` (the runner's output_str is `missing binary: a, b`). Returns jobs re-queued."""
    rows = ctx.conn.execute(
        "SELECT r.snapshot_id, r.plugin, r.hook, r.output_str FROM archive_results r"
        " WHERE r.status = 'skipped' AND r.error_code = 'E_BINARY_MISSING'"
    ).fetchall()
    by_snapshot: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        missing = {n.strip() for n in str(row["output_str"]).split(":", 1)[-1].split(",")}
        if missing and missing <= present:
            by_snapshot[row["snapshot_id"]].append(f"{row['plugin']}/{row['hook']}")
    requeued = 0
    for snapshot_id, hooks in by_snapshot.items():
        requeued += transitions.requeue_hooks(
            ctx.conn, snapshot_id, json.dumps(sorted(hooks)), ctx.now_iso
        )
    if requeued:
        log.info("re-queued %d job(s) whose hooks waited for %s", requeued, sorted(present))
    return requeued
