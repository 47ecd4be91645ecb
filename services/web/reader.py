"""The reader view of a link: its sanitized article, else its archived plain text.

The article comes from the newest ``article`` artifact (sanitized HTML the text plugin
wrote); it is sanitized again here before it is shown. S3 being slow or down never holds
the page up: after a short timeout the page shows the plain text instead.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from services.web.present import reader_html
from services.web.state import WebState
from shared.errors import StorageError

log = logging.getLogger(__name__)

ARTICLE_KIND = "article"
ARTICLE_MAX_BYTES = 2 * 1024 * 1024
FETCH_TIMEOUT = 2.0


@dataclass(frozen=True)
class Reader:
    """What the reader view shows: sanitized article HTML or plain text."""

    html: Markup | None
    text: str | None
    note: str = ""


async def reader_view(state: WebState, link: dict[str, Any]) -> Reader | None:
    """The reader view of a link, or None when nothing readable was archived."""
    article = next(
        (
            a
            for a in reversed(link["artifacts"])
            if a["kind"] == ARTICLE_KIND and a["bytes"] <= ARTICLE_MAX_BYTES
        ),
        None,
    )
    note = ""
    if article is not None and state.store is not None:
        try:
            data = await asyncio.wait_for(state.store.get_bytes(article["s3_key"]), FETCH_TIMEOUT)
            return Reader(reader_html(data.decode("utf-8", "replace")), None)
        except (StorageError, TimeoutError) as exc:
            log.warning("reader view of link %s: %s", link["id"], exc)
            note = "The article is unavailable right now; this is the archived plain text."
    if link.get("text"):
        return Reader(None, link["text"], note)
    return None
