"""What the admin console and the admin JSON routes read: the queue, failures by error code,
takedowns and exclusions, liveness verdicts awaiting confirmation, the audit trail and its
export. Read-only SQL on a ``mode=ro`` connection (the private tables are the writer's)."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from services.web.liveness_admin import liveness_counts
from shared.hooks.error_codes import opted_out
from shared.links.domains import registrable_domain
from shared.spreadsheet_cells import text_cell

AUDIT_COLUMNS = (
    "id",
    "at",
    "admin",
    "action",
    "target",
    "reason",
    "outcome",
    "detail",
    "request_id",
    "requested_at",
)
"""The audit trail's columns, in the order the exports give them."""


def open_ro(path: Path) -> sqlite3.Connection:
    """A read-only connection with rows as mappings (FileNotFoundError: no database yet)."""
    if not path.exists():
        raise FileNotFoundError(path)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    return conn


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    """True when the database has this table (an older schema may not)."""
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
    return row.fetchone() is not None


def queue(conn: sqlite3.Connection, now: datetime) -> dict[str, Any]:
    """Jobs by status, how many of the failed ones their page declined (`declined_jobs`: the
    page asked not to be archived, a retry leaves them alone), the sites that asked us to
    slow down (`domains_backing_off`), captures per minute (last 10 min), failures in the
    last hour by error code, the oldest pending job, the liveness checks, the audit trail's
    latest entries."""
    hour_ago = (now - timedelta(hours=1)).isoformat()
    ten_min = (now - timedelta(minutes=10)).isoformat()
    jobs = {
        r["status"]: r["n"]
        for r in conn.execute("SELECT status, count(*) AS n FROM archive_jobs GROUP BY status")
    }
    declined = sum(
        r["n"]
        for r in conn.execute(
            "SELECT l.last_error_code AS code, count(*) AS n FROM archive_jobs j"
            " JOIN links l ON l.id = j.link_id WHERE j.status = 'failed'"
            " GROUP BY l.last_error_code"
        )
        if opted_out(r["code"])
    )
    done = conn.execute(
        "SELECT count(*) FROM archive_jobs WHERE status = 'succeeded' AND finished_at >= ?",
        (ten_min,),
    ).fetchone()[0]
    failures = {
        r["code"]: r["n"]
        for r in conn.execute(
            "SELECT coalesce(error_code, 'unknown') AS code, count(*) AS n"
            " FROM archive_results WHERE status = 'failed' AND updated_at >= ?"
            " GROUP BY code ORDER BY n DESC",
            (hour_ago,),
        )
    }
    oldest = conn.execute(
        "SELECT j.id, j.link_id, l.canonical_url AS url, j.status, j.enqueued_at,"
        " j.attempts FROM archive_jobs j JOIN links l ON l.id = j.link_id"
        " WHERE j.status IN ('queued', 'running') ORDER BY j.enqueued_at, j.id LIMIT 1"
    ).fetchone()
    liveness = liveness_counts(conn, now) if has_table(conn, "liveness_schedule") else None
    return {
        "jobs": jobs,
        "declined_jobs": declined,
        "domains_backing_off": backing_off(conn, now),
        "captures_per_minute": round(done / 10, 2),
        "failures_last_hour": failures,
        "oldest_pending": dict(oldest) if oldest else None,
        "liveness": liveness,
        "audit": audit(conn, limit=20),
    }


def backing_off(conn: sqlite3.Connection, now: datetime) -> list[dict[str, Any]]:
    """The registrable domains nothing is sent to until `until` (they answered 429 or "rate
    limited": services/writer/scheduler.py), soonest first: `domain`, `until`, `reason` (the
    error code and the link that got it), `hits` (answers so in a row)."""
    if not has_table(conn, "domain_backoff"):
        return []
    return [
        dict(r)
        for r in conn.execute(
            "SELECT domain, until, reason, hits FROM domain_backoff WHERE until > ?"
            " ORDER BY until, domain",
            (now.isoformat(),),
        )
    ]


def by_domain(
    conn: sqlite3.Connection, limit: int = 200, now: datetime | None = None
) -> list[dict[str, Any]]:
    """Per domain: jobs running and waiting, links failed (what a retry would queue again:
    not those whose page asked not to be archived), and until when its site backs off
    (`paused_until`, `paused_why`: nothing is sent to it before)."""
    rows: dict[str, dict[str, Any]] = {}
    paused = {b["domain"]: b for b in backing_off(conn, now or datetime.now(UTC))}

    def row(domain: str) -> dict[str, Any]:
        if domain not in rows:
            pause = paused.get(registrable_domain(domain)) or {}
            rows[domain] = {"domain": domain, "running": 0, "waiting": 0, "failed": 0,
                            "oldest": None, "paused_until": pause.get("until"),
                            "paused_why": pause.get("reason")}  # fmt: skip
        return rows[domain]

    for r in conn.execute(
        "SELECT l.domain, j.status, count(*) AS n, min(j.enqueued_at) AS oldest"
        " FROM archive_jobs j JOIN links l ON l.id = j.link_id"
        " WHERE j.status IN ('queued', 'running') GROUP BY l.domain, j.status"
    ):
        item = row(r["domain"])
        item["running" if r["status"] == "running" else "waiting"] = r["n"]
        if r["status"] == "queued":
            item["oldest"] = r["oldest"]
    for r in conn.execute(
        "SELECT domain, last_error_code, count(*) AS n FROM links WHERE status = 'failed'"
        " AND taken_down_at IS NULL GROUP BY domain, last_error_code"
    ):
        if not opted_out(r["last_error_code"]):
            row(r["domain"])["failed"] += r["n"]
    ordered = sorted(rows.values(), key=lambda d: (-d["running"] - d["waiting"], -d["failed"]))
    return ordered[:limit]


def jobs(conn: sqlite3.Connection, status: str, limit: int = 50) -> list[dict[str, Any]]:
    """Jobs of one status (`running`, `queued`), oldest first, with their link's URL."""
    return [
        dict(r)
        for r in conn.execute(
            "SELECT j.id, j.kind, j.link_id, l.canonical_url AS url, l.domain, j.attempts,"
            " j.enqueued_at, j.dispatched_at, j.last_error FROM archive_jobs j"
            " JOIN links l ON l.id = j.link_id WHERE j.status = ?"
            " ORDER BY j.enqueued_at, j.id LIMIT ?",
            (status, limit),
        )
    ]


def failures_by_code(conn: sqlite3.Connection, limit: int = 100) -> list[dict[str, Any]]:
    """Failed hook results by error code and hook: how many, of how many links, the newest,
    a few of the links, and whether the code is a page declining to be archived (`declined`:
    not retried); the codes and hook names are the owner's: this is the place."""
    found = [
        dict(r)
        for r in conn.execute(
            "SELECT coalesce(r.error_code, '(none)') AS error_code, r.plugin, r.hook,"
            " count(*) AS results, count(DISTINCT s.link_id) AS links,"
            " max(r.updated_at) AS newest,"
            " (SELECT group_concat(link_id) FROM (SELECT DISTINCT s2.link_id FROM"
            "  archive_results r2 JOIN snapshots s2 ON s2.id = r2.snapshot_id"
            "  WHERE r2.status = 'failed' AND r2.hook = r.hook"
            "  AND coalesce(r2.error_code, '') = coalesce(r.error_code, '')"
            "  ORDER BY s2.link_id DESC LIMIT 5)) AS some_links"
            " FROM archive_results r JOIN snapshots s ON s.id = r.snapshot_id"
            " WHERE r.status = 'failed' GROUP BY r.error_code, r.plugin, r.hook"
            " ORDER BY results DESC LIMIT ?",
            (limit,),
        )
    ]
    for item in found:
        item["some_links"] = [int(x) for x in str(item["some_links"] or "").split(",") if x]
        item["declined"] = opted_out(item["error_code"])
    return found


def takedowns(conn: sqlite3.Connection, now: datetime, limit: int = 200) -> list[dict[str, Any]]:
    """The takedowns, newest first: the link, why, by whom, when, and its state now: `hidden`
    (undo possible until `purge_after`, `seconds_left`), `purged`, or `undone`."""
    holds = (
        {int(r["link_id"]): dict(r) for r in conn.execute("SELECT * FROM takedown_holds")}
        if has_table(conn, "takedown_holds")
        else {}
    )
    out = []
    for r in conn.execute(
        "SELECT id, target, reason, admin, at, detail, request_id FROM admin_audit"
        " WHERE action = 'takedown' AND outcome LIKE 'done%' ORDER BY id DESC LIMIT ?",
        (limit,),
    ):
        link_id = int(str(r["target"]).removeprefix("link "))
        link = conn.execute(
            "SELECT canonical_url, taken_down_at FROM links WHERE id = ?", (link_id,)
        ).fetchone()
        hold = holds.get(link_id)
        item = dict(r) | {"link_id": link_id, "url": link["canonical_url"] if link else None}
        if hold is not None and hold["request_id"] == r["request_id"]:
            until = datetime.fromisoformat(str(hold["purge_after"]).replace("Z", "+00:00"))
            item |= {
                "state": "hidden",
                "purge_after": hold["purge_after"],
                "seconds_left": max(0, int((until - now).total_seconds())),
            }
        elif link is not None and link["taken_down_at"] is None:
            item |= {"state": "undone", "purge_after": None, "seconds_left": 0}
        elif hold is not None:
            item |= {"state": "taken down again", "purge_after": None, "seconds_left": 0}
        else:
            item |= {"state": "purged", "purge_after": None, "seconds_left": 0}
        out.append(item)
    return out


def exclusions(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """The excluded domains with why, by whom and when (newest first)."""
    return [
        dict(r)
        for r in conn.execute(
            "SELECT domain, reason, admin, created_at FROM excluded_domains"
            " ORDER BY created_at DESC, domain"
        )
    ]


def awaiting_confirmation(conn: sqlite3.Connection, limit: int = 200) -> list[dict[str, Any]]:
    """Links whose original answered `gone` in the newest check but whose verdict is not
    `gone` yet (the confirmation window, LIVENESS_CONFIRM_SECONDS, has not passed)."""
    if not has_table(conn, "liveness_verdicts"):
        return []
    rows = conn.execute(
        "SELECT v.link_id, l.canonical_url AS url, v.platform, v.state, v.reason,"
        " v.tombstone, v.checked,"
        " (SELECT min(o.at) FROM liveness_observations o WHERE o.link_id = v.link_id"
        "  AND o.answer IN (2, 3) AND o.at > coalesce((SELECT max(p.at) FROM"
        "  liveness_observations p WHERE p.link_id = v.link_id AND p.answer = 1), 0))"
        "  AS first_gone"
        " FROM liveness_verdicts v JOIN links l ON l.id = v.link_id"
        " WHERE v.answer IN (2, 3) AND v.state != 'gone' AND l.taken_down_at IS NULL"
        " ORDER BY v.checked DESC LIMIT ?",
        (limit,),
    )
    return [
        dict(r)
        | {
            "checked": _iso(r["checked"]),
            "first_gone": _iso(r["first_gone"]),
        }
        for r in rows
    ]


def _iso(seconds: int | None) -> str | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC).isoformat()


def audit(
    conn: sqlite3.Connection, *, before: int | None = None, limit: int = 100
) -> list[dict[str, Any]]:
    """The audit trail's entries, newest first (below id `before`, when given)."""
    if not has_table(conn, "admin_audit"):
        return []
    cols = ", ".join(AUDIT_COLUMNS)
    return [
        dict(r)
        for r in conn.execute(
            f"SELECT {cols} FROM admin_audit WHERE id < ? ORDER BY id DESC LIMIT ?",
            (before or 2**62, limit),
        )
    ]


def audit_export(conn: sqlite3.Connection, fmt: str, batch: int = 500) -> Iterator[str]:
    """The whole audit trail, oldest first, as CSV (a header line, cells that a spreadsheet
    would take for a formula quoted with a leading ') or JSONL (one object per line)."""
    if fmt == "csv":
        yield _csv_line(AUDIT_COLUMNS)
    if not has_table(conn, "admin_audit"):
        return
    after = 0
    while True:
        rows = conn.execute(
            f"SELECT {', '.join(AUDIT_COLUMNS)} FROM admin_audit WHERE id > ? ORDER BY id LIMIT ?",
            (after, batch),
        ).fetchall()
        if not rows:
            return
        for r in rows:
            if fmt == "csv":
                yield _csv_line(tuple(text_cell(r[c]) for c in AUDIT_COLUMNS))
            else:
                yield json.dumps(dict(r), ensure_ascii=False) + "\n"
        after = int(rows[-1]["id"])


def _csv_line(cells: tuple[str, ...]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(cells)
    return buf.getvalue()
