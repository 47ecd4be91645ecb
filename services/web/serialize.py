"""Rows -> the public JSON API (field names documented in docs/api.md; keep them stable)."""

from __future__ import annotations

from typing import Any

from services.web.compare import Comparison, Side
from services.web.posts import post_view
from services.web.present import display_status, snippet_json


def artifact(a: dict[str, Any]) -> dict[str, Any]:
    """An artifact: what it is and where to get it (through this app, never S3 directly)."""
    return {
        "id": a["id"],
        "kind": a["kind"],
        "url": f"/artifacts/{a['id']}",
        "sha256": a["sha256"],
        "bytes": a["bytes"],
        "content_type": a["content_type"],
        "plugin": a.get("plugin"),
        "path": a.get("path"),
        "snapshot_id": a.get("snapshot_id"),
        "created_at": a.get("created_at"),
        "attempt": a.get("attempt"),
        "run": a.get("run"),
        "private": bool(a.get("private")),
    }


def link_summary(row: dict[str, Any]) -> dict[str, Any]:
    """A link in a list (home, search, export)."""
    return {
        "id": row["id"],
        "url": row["url"],
        "title": row.get("title"),
        "domain": row["domain"],
        "status": row["status"],
        "status_label": display_status(row["status"], row.get("error_code"))[0],
        "error_code": row.get("error_code"),
        "last_outcome": row.get("last_outcome"),
        "retry_at": row.get("retry_at"),
        "first_seen_at": row.get("first_seen_at"),
        "last_archived_at": row.get("last_archived_at"),
        "quoted": bool(row.get("quoted")),
        "video": bool(row.get("video")),
        "source_status": row.get("source_status"),
        "artifacts": [artifact(a) for a in row.get("artifacts", ())],
    }


METADATA_FIELDS = ("title", "description", "author", "published_at", "site_name", "language")


def result(r: dict[str, Any]) -> dict[str, Any]:
    """One hook run's result (one row per attempt)."""
    failed = r["status"] == "failed"
    return {
        "plugin": r["plugin"],
        "hook": r["hook"],
        "status": r["status"],
        "attempt": r["attempt"],
        "error_code": r["error_code"],
        "error": (r["output_str"] or r["error_code"] or "failed") if failed else None,
        "output": r["output_str"] or None,
        "started_at": r["started_at"],
        "ended_at": r["ended_at"],
        "retry_at": r["retry_at"],
    }


def snapshot(s: dict[str, Any]) -> dict[str, Any]:
    """One capture of the link with every attempt's results and its artifacts."""
    return {
        "id": s["id"],
        "status": s.get("job_status") or s["status"],
        "outcome": s.get("outcome"),
        "started_at": s["created_at"],
        "updated_at": s["updated_at"],
        "attempts": s.get("job_attempts"),
        "error": s.get("last_error"),
        "final_url": s.get("final_url"),
        "results": [result(r) for r in s["results"]],
        "artifacts": [artifact(a) for a in s["artifacts"]],
    }


def link_detail(link: dict[str, Any]) -> dict[str, Any]:
    """Everything about one link."""
    meta = link["metadata"]
    return {
        "id": link["id"],
        "url": link["canonical_url"],
        "original_url": link["original_url"],
        "normalized_url": link["normalized_url"],
        "canonical_url": link["canonical_url"],
        "final_url": link["final_url"],
        "domain": link["domain"],
        "status": link["status"],
        "status_label": display_status(link["status"], link.get("error_code"))[0],
        "error_code": link.get("error_code"),
        "last_outcome": link["last_outcome"],
        "last_error": link["last_error"],
        "last_attempt_at": link["last_attempt_at"],
        "retry_at": link["retry_at"],
        "first_seen_at": link["first_seen_at"],
        "last_seen_at": link["last_seen_at"],
        "last_archived_at": link["last_archived_at"],
        "aliases": link["aliases"],
        "metadata": {k: meta.get(k) for k in METADATA_FIELDS},
        "occurrences": [
            {
                "post_url": o["post_url"],
                "forum": o["forum"],
                "topic_title": o["topic_title"],
                "author": o["author"],
                "in_quote": o["in_quote"],
                "snippet": o["snippet"],
                "seen_at": o["seen_at"],
                "original_url": o["original_url"],
            }
            for o in link["occurrences"]
        ],
        "snapshots": [snapshot(s) for s in link["snapshots"]],
        "artifacts": [artifact(a) for a in link["artifacts"]],
        "video": bool(link.get("video")),
        "videos": [video(v) for v in link.get("videos", ())],
        "post": post_view(link.get("post"), link["artifacts"]),
        "fingerprint": (link.get("evidence") or {}).get("fingerprint"),
        "evidence": evidence(link.get("evidence")),
        "external_archives": [external(x) for x in link.get("external_archives", ())],
        "source_status": link["source_status"],
    }


def _maybe(a: dict[str, Any] | None) -> str | None:
    return f"/artifacts/{a['id']}" if a else None


def evidence(e: dict[str, Any] | None) -> dict[str, Any] | None:
    """The newest capture's evidence: fingerprint, files, verdict, timestamps."""
    if e is None:
        return None
    return {
        "snapshot_id": e["snapshot_id"],
        "fingerprint": e["fingerprint"],
        "manifest_url": _maybe(e["manifest"]),
        "wacz_url": _maybe(e["wacz"]),
        "verification": {
            "verdict": e["verdict"],
            "detail": e["verdict_detail"],
            "checked_at": e["checked_at"],
        },
        "timestamps": [
            {
                "authority": t["authority"],
                "status": t["status"],
                "time": t["granted_time"],
                "token_url": _maybe(t["token"]),
                "chain_url": _maybe(t["chain"]),
                "last_error": t["last_error"],
                "next_try_at": t["next_try_at"],
            }
            for t in e["timestamps"]
        ],
    }


def external(x: dict[str, Any]) -> dict[str, Any]:
    """The link's submission to one public archive: its snapshot there, or why not (yet)."""
    return {
        "service": x["service"],
        "status": x["status"],
        "url": x["snapshot_url"],
        "captured_at": x["captured_at"],
        "submitted_url": x["url"],
        "last_error": x["last_error"],
        "next_try_at": x["next_try_at"],
    }


def video(v: dict[str, Any]) -> dict[str, Any]:
    """One video the link shows (downloaded once however many links show it)."""
    return {
        "platform": v["platform"],
        "video_id": v["video_id"],
        "status": v["status"],
        "error_code": v["error_code"],
        "title": v["title"],
        "uploader": v["uploader"],
        "duration_s": v["duration_s"],
        "media_url": v["media_url"],
        "downloaded_bytes": v["downloaded_bytes"],
        "total_bytes": v["total_bytes"],
        "percent": v["percent"],
        "updated_at": v["updated_at"],
        "files": [artifact(a) for a in v["files"]],
    }


def search_hit(row: dict[str, Any]) -> dict[str, Any]:
    """A search result."""
    return {
        "link_id": row["id"],
        "url": row["url"],
        "title": row.get("title"),
        "domain": row["domain"],
        "status": row["status"],
        "last_archived_at": row.get("last_archived_at"),
        "snippet": snippet_json(row.get("snippet")),
    }


def _side(s: Side) -> dict[str, Any]:
    return {
        "snapshot_id": s.snapshot["id"],
        "captured_at": s.snapshot["created_at"],
        "screenshot": artifact(s.screenshot) if s.screenshot else None,
        "text": artifact(s.text) if s.text else None,
    }


def comparison(link_id: int, c: Comparison) -> dict[str, Any]:
    """Two captures and the word diff of their texts (None, with a note, when unavailable)."""
    diff = None
    if c.diff is not None:
        diff = {
            "added": c.diff.added,
            "removed": c.diff.removed,
            "pieces": [{"op": p.op, "text": p.text} for p in c.diff.pieces],
        }
    return {
        "link_id": link_id,
        "a": _side(c.a),
        "b": _side(c.b),
        "diff": diff,
        "note": c.note or None,
    }


def older_hit(row: dict[str, Any]) -> dict[str, Any]:
    """A link only an older capture of which holds the words searched, and that capture."""
    return {
        "link_id": row["id"],
        "url": row["url"],
        "title": row.get("title"),
        "domain": row["domain"],
        "snapshot_id": row["older_snapshot_id"],
        "captured_at": row["older_captured_at"],
        "compare_url": f"/links/{row['id']}/compare?a={row['older_snapshot_id']}",
        "snippet": snippet_json(row.get("snippet")),
    }


def submission(row: dict[str, Any]) -> dict[str, Any]:
    """What became of a request."""
    return {
        "request_id": row["request_id"],
        "state": "decided",
        "kind": row["kind"],
        "url": row["url"],
        "decision": row["decision"],
        "reason": row["reason"],
        "link_id": row["link_id"],
        "link_url": f"/links/{row['link_id']}" if row["link_id"] is not None else None,
        "job_id": row["job_id"],
        "job_status": row.get("job_status"),
        "attempts": row.get("attempts"),
        "last_error": row.get("last_error"),
        "requested_at": row["requested_at"],
        "decided_at": row["decided_at"],
        "finished_at": row.get("finished_at"),
    }
