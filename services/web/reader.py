"""The reader view of a link: its sanitized article, else its archived plain text.

The article is the newest ``article`` artifact, written by the readable plugin through the
one sanitiser (``shared.content.sanitize``) and shown here as it is: no second allowlist.
Its images are the capture's own copies (``images/<n>.<ext>`` beside ``article.html``, kind
``article_image``); the only change made here points each at its artifact URL, so nothing is
loaded from the archived site (the page's CSP allows images from this origin and the S3
origin alone, and no script at all). S3 being slow or down never holds the page up: after a
short timeout the page shows the plain text instead.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from services.web.state import WebState
from shared.errors import StorageError

log = logging.getLogger(__name__)

ARTICLE_KIND = "article"
IMAGE_KIND = "article_image"
ARTICLE_MAX_BYTES = 2 * 1024 * 1024
FETCH_TIMEOUT = 2.0
_IMAGE_SRC = re.compile(r'(<img\b[^>]*?\ssrc=")(images/[^"/]+)(")')
"""The source of an image in the sanitiser's output (attribute values are double-quoted,
a quote inside one escaped)."""


@dataclass(frozen=True)
class Reader:
    """What the reader view shows: sanitized article HTML or plain text."""

    html: Markup | None
    text: str | None
    note: str = ""


def image_urls(artifacts: list[dict[str, Any]], article: dict[str, Any]) -> dict[str, str]:
    """The article's image copies (path beside the article -> artifact URL)."""
    return {
        a["path"]: f"/artifacts/{a['id']}"
        for a in artifacts
        if a["kind"] == IMAGE_KIND
        and a["snapshot_id"] == article["snapshot_id"]
        and a["plugin"] == article["plugin"]
    }


def with_image_urls(html: str, urls: Mapping[str, str]) -> str:
    """The article with each image copy's path made its artifact URL (a path without an
    artifact stays relative: it resolves on this origin, never the archived site's)."""
    return _IMAGE_SRC.sub(lambda m: m[1] + urls.get(m[2], m[2]) + m[3], html)


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
            html = with_image_urls(
                data.decode("utf-8", "replace"), image_urls(link["artifacts"], article)
            )
            return Reader(Markup(html), None)
        except (StorageError, TimeoutError) as exc:
            log.warning("reader view of link %s: %s", link["id"], exc)
            note = "The article is unavailable right now; this is the archived plain text."
    if link.get("text"):
        return Reader(None, link["text"], note)
    return None
