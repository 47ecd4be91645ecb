"""Two captures of a link side by side: their screenshots, and a word diff of their texts.

Each capture's text is its `text` artifact (the readable hook's plain text), or for a
platform's post its `post` artifact's title and text, read from S3 as the reader view reads
its article (a short timeout; S3 slow or down leaves a note, never an error). The diff is
`shared.content.worddiff` (difflib, paragraphs first), run off the event loop; a text is
read up to TEXT_MAX_BYTES.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Any

from services.web.state import WebState
from shared.content.worddiff import WordDiff, word_diff
from shared.errors import StorageError

log = logging.getLogger(__name__)

TEXT_MAX_BYTES = 4 * 1024 * 1024
FETCH_TIMEOUT = 2.0
TEXT_KINDS = ("text", "post")


@dataclass(frozen=True)
class Side:
    """One capture: its snapshot row, screenshot and text artifacts."""

    snapshot: dict[str, Any]
    screenshot: dict[str, Any] | None
    text: dict[str, Any] | None


@dataclass(frozen=True)
class Comparison:
    """What the compare page shows."""

    a: Side
    b: Side
    diff: WordDiff | None
    note: str = ""


def side(snapshot: dict[str, Any]) -> Side:
    """A capture's screenshot and text (the readable text first, else the post)."""
    arts = snapshot["artifacts"]
    shot = next((x for x in reversed(arts) if x["kind"] == "screenshot"), None)
    text = next((x for kind in TEXT_KINDS for x in reversed(arts) if x["kind"] == kind), None)
    return Side(snapshot, shot, text)


def comparable(link: dict[str, Any]) -> list[dict[str, Any]]:
    """The link's captures with a screenshot or a text, newest first."""
    return [s for s in link["snapshots"] if side(s).screenshot or side(s).text]


def edited(link: dict[str, Any]) -> bool:
    """Whether the original's text changed after it was first captured: a liveness check
    saw it change, or two captures' texts differ."""
    if (link.get("source_status") or {}).get("edited"):
        return True
    texts = {a["sha256"] for a in link["artifacts"] if a["kind"] == "text" and a["bytes"]}
    return len(texts) > 1


def _as_text(artifact: dict[str, Any], data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    if artifact["kind"] != "post":
        return text
    try:
        post = json.loads(text)
    except ValueError:
        return ""
    return "\n\n".join(str(post.get(k) or "") for k in ("title", "text") if post.get(k))


async def _read(state: WebState, artifact: dict[str, Any] | None) -> str | None:
    """A capture's text (None when it has none); raises StorageError or TimeoutError."""
    if artifact is None:
        return None
    if artifact["bytes"] > TEXT_MAX_BYTES:
        raise StorageError(f"the text is larger than {TEXT_MAX_BYTES} bytes")
    if state.store is None:
        raise StorageError("storage unavailable")
    data = await asyncio.wait_for(state.store.get_bytes(artifact["s3_key"]), FETCH_TIMEOUT)
    return _as_text(artifact, data)


async def compare(state: WebState, a: dict[str, Any], b: dict[str, Any]) -> Comparison:
    """Capture `a` (the older, usually) against `b`."""
    left, right = side(a), side(b)
    try:
        old, new = await asyncio.gather(_read(state, left.text), _read(state, right.text))
    except (StorageError, TimeoutError) as exc:
        log.warning("compare %s/%s: %s", a["id"], b["id"], exc)
        return Comparison(left, right, None, "The texts are unavailable right now.")
    if old is None or new is None:
        return Comparison(left, right, None, "One of these captures kept no text.")
    diff = await asyncio.to_thread(word_diff, old, new)
    return Comparison(left, right, diff)
