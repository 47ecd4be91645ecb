"""A link's platform post as the web shows it: the stored post (shared/platforms/post.py) with
each of its media pointing at our copy (`/artifacts/<id>`, found among the link's artifacts by
the snapshot, plugin and file the post names), never at the platform: an image or poster
without a copy is shown as a note, not fetched from the original site. The same view is the
link page's post card and `"post"` in `/links/{id}.json`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

log = logging.getLogger(__name__)

COUNTS = (
    ("likes", "like", "likes"),
    ("reposts", "repost", "reposts"),
    ("replies", "reply", "replies"),
    ("views", "view", "views"),
)


def _copies(row: dict[str, Any], artifacts: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Our files of the post: path inside the plugin's folder -> artifact id."""
    return {
        str(a["path"]): int(a["id"])
        for a in artifacts
        if a["snapshot_id"] == row["snapshot_id"] and a["plugin"] == row["plugin"]
    }


def _resolve(post: dict[str, Any], copies: dict[str, int]) -> dict[str, Any]:
    for item in post.get("media") or []:
        for name in ("file", "poster_file"):
            found = copies.get(str(item.get(name) or ""))
            if found is not None:
                item[f"{name}_url"] = f"/artifacts/{found}"
    for key in ("parent", "quoted"):
        if isinstance(post.get(key), dict):
            _resolve(post[key], copies)
    for reply in post.get("replies") or []:
        _resolve(reply, copies)
    return post


def post_view(
    row: dict[str, Any] | None, artifacts: Sequence[dict[str, Any]]
) -> dict[str, Any] | None:
    """The post of a `link_posts` row with our copies' URLs, and where it was captured;
    None for an ordinary page (or a row that no longer parses)."""
    if row is None:
        return None
    try:
        post = json.loads(row["post_json"])
    except (TypeError, ValueError):
        log.warning("link %s: its post does not parse", row.get("link_id"))
        return None
    if not isinstance(post, dict):
        return None
    post = _resolve(post, _copies(row, artifacts))
    post["captured"] = {
        "snapshot_id": row["snapshot_id"],
        "plugin": row["plugin"],
        "at": row["captured_at"],
    }
    return post


def counts_line(counts: dict[str, Any] | None) -> str:
    """'42 likes · 5 reposts · 3 replies' (the counts the platform gave, as of the capture)."""
    parts = []
    for key, one, many in COUNTS:
        value = (counts or {}).get(key)
        if isinstance(value, int):
            parts.append(f"{value:,} {one if value == 1 else many}")
    return " · ".join(parts)
