"""Downloads: artifacts (presigned S3 redirect or proxied, never executable), the JSONL
export, the RSS feeds of new archives and of newly gone originals, and the latest database
backup."""

from __future__ import annotations

import asyncio
import functools
import json
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import PurePosixPath
from typing import Annotated, Any
from xml.etree import ElementTree as ET

from fastapi import APIRouter, Depends, HTTPException, Path, Request
from fastapi.responses import RedirectResponse, Response, StreamingResponse

from services.web import byte_ranges, serialize
from services.web.admin import admin_name
from services.web.params import MAX_ID
from services.web.present import parse_time, source_badge
from services.web.queries.links import (
    artifact_row,
    export_batch,
    newest_listed,
    newly_gone,
    no_rows,
)
from services.web.security import ARTIFACT_CSP, delivery
from services.web.state import WebState, web_state
from shared.backup_layout import PREFIX, backup_dates, key_of_date
from shared.errors import StorageError

router = APIRouter()
State = Annotated[WebState, Depends(web_state)]
S3_TIMEOUT = 5.0
FEED_ITEMS = 50
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


async def send_object(
    state: WebState,
    key: str,
    content_type: str | None,
    filename: str,
    *,
    size: int | None = None,
    asked: str | None = None,
) -> Response:
    """An S3 object, safely: presigned redirect or proxied stream, per ARTIFACT_DELIVERY.
    Proxied, an object of known `size` answers one byte range of the request's `Range`
    header (`asked`) with 206, as S3 does for a presigned URL: a video's player seeks, and
    Safari plays a video only from a server that answers ranges."""
    ctype, disposition = delivery(content_type, filename)
    if state.settings.artifact_delivery == "proxy":
        headers = {
            "content-disposition": disposition,
            "content-security-policy": ARTIFACT_CSP,
            "cache-control": "private, max-age=300",
        }
        part = None
        if size is not None:
            headers["accept-ranges"] = "bytes"
            try:
                part = byte_ranges.parse(asked, size)
            except byte_ranges.Unsatisfiable:
                return Response(status_code=416, headers={"content-range": f"bytes */{size}"})
        if state.store is None:
            raise HTTPException(503, "storage unavailable")
        span = None if part is None else (part.first, part.last)
        try:
            chunks, length = await asyncio.wait_for(state.store.open(key, span), S3_TIMEOUT)
        except (StorageError, TimeoutError) as exc:
            raise HTTPException(502, "storage did not give the file") from exc
        if part is not None:
            headers["content-range"] = part.content_range
        if length:
            headers["content-length"] = str(length)
        status = 200 if part is None else 206
        return StreamingResponse(chunks, status, headers, media_type=ctype)
    if state.signer is None:
        raise HTTPException(503, "storage unavailable")
    url = await state.signer.presigned_get(
        key, state.settings.presign_seconds, content_type=ctype, disposition=disposition
    )
    return RedirectResponse(url, status_code=302, headers={"cache-control": "no-store"})


@router.get("/artifacts/{artifact_id}", summary="Download an artifact")
async def artifact(
    request: Request, state: State, artifact_id: Annotated[int, Path(ge=1, le=MAX_ID)]
) -> Response:
    """Images, PDF, video and text open in the browser; HTML, DOM and anything else that
    could run is a download (`Content-Disposition: attachment`). A private one (the traffic,
    WACZ, raw response or DOM of a capture made with the site's cookies) needs the admin
    token (`Authorization: Bearer`)."""
    a = await state.db.read(lambda c: artifact_row(c, artifact_id), None)
    if a is None:
        raise HTTPException(404, f"no artifact {artifact_id}")
    if a["private"]:
        admin_name(request)  # 401/403 without a valid admin token
    name = PurePosixPath(a["path"] or a["s3_key"]).name
    return await send_object(
        state, a["s3_key"], a["content_type"], f"{a['link_id']}-{name}",
        size=a["bytes"], asked=request.headers.get("range"),
    )  # fmt: skip


@router.get("/export/links.jsonl", summary="Every listed link, one JSON object per line")
async def export_links(state: State) -> Response:
    """Streamed: links with their metadata and artifacts, in id order."""

    async def lines() -> AsyncIterator[bytes]:
        after = 0
        while True:
            batch = await state.db.read(functools.partial(export_batch, after=after), no_rows())
            if not batch:
                return
            for row in batch:
                item = serialize.link_summary(row) | {
                    "original_url": row["original_url"],
                    "final_url": row["final_url"],
                    "metadata": {k: row.get(k) for k in serialize.METADATA_FIELDS},
                }
                yield json.dumps(item, ensure_ascii=True).encode() + b"\n"
            after = batch[-1]["id"]

    return StreamingResponse(
        lines(),
        media_type="application/x-ndjson",
        headers={"content-disposition": 'attachment; filename="links.jsonl"'},
    )


def _xml_text(value: Any) -> str:
    return _XML_BAD.sub("", str(value or ""))


def rss(base: str, rows: list[dict[str, Any]]) -> bytes:
    """RSS 2.0 of newly archived links."""
    root, channel = _channel(
        base, "Link archive: new archives", "Links newly archived from the forum."
    )
    for row in rows:
        item = ET.SubElement(channel, "item")
        ET.SubElement(item, "title").text = _xml_text(row.get("title") or row["url"])
        ET.SubElement(item, "link").text = f"{base}/links/{row['id']}"
        ET.SubElement(
            item, "guid", isPermaLink="false"
        ).text = f"link-{row['id']}-{_xml_text(row['last_archived_at'])}"
        ET.SubElement(item, "description").text = _xml_text(
            f"{row['url']} ({row['domain']}), {row['status']}"
        )
        when = parse_time(row["last_archived_at"])
        if when is not None:
            ET.SubElement(item, "pubDate").text = format_datetime(when)
    body: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return body


def _channel(base: str, title: str, description: str) -> tuple[ET.Element, ET.Element]:
    root = ET.Element("rss", version="2.0")
    channel = ET.SubElement(root, "channel")
    ET.SubElement(channel, "title").text = title
    ET.SubElement(channel, "link").text = base + "/"
    ET.SubElement(channel, "description").text = description
    return root, channel


def gone_rss(base: str, rows: list[dict[str, Any]]) -> bytes:
    """RSS 2.0 of links whose originals are newly gone (deleted at source), with the
    evidence in words; each item's date is when the verdict was reached."""
    root, channel = _channel(
        base, "Link archive: gone at source", "Archived links whose originals were deleted."
    )
    for row in rows:
        source = row.get("source_status") or {}
        item = ET.SubElement(channel, "item")
        ET.SubElement(item, "title").text = _xml_text(row.get("title") or row["url"])
        ET.SubElement(item, "link").text = f"{base}/links/{row['id']}#source"
        ET.SubElement(item, "guid", isPermaLink="false").text = f"gone-{row['id']}-{row['gone_at']}"
        ET.SubElement(item, "description").text = _xml_text(
            f"{row['url']}: {source_badge(source) or 'gone'} ({source.get('reason') or ''})"
        )
        ET.SubElement(item, "pubDate").text = format_datetime(
            datetime.fromtimestamp(int(row["gone_at"]), UTC)
        )
    body: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return body


@router.get("/feed.xml", summary="RSS of new archives")
async def feed(request: Request, state: State) -> Response:
    """The 50 newest archives as RSS 2.0."""
    rows = await state.db.read(lambda c: newest_listed(c, FEED_ITEMS), no_rows())
    base = str(request.base_url).rstrip("/")
    return Response(rss(base, rows), media_type="application/rss+xml; charset=utf-8")


@router.get("/gone.xml", summary="RSS of originals newly gone")
async def gone_feed(request: Request, state: State) -> Response:
    """The 50 links whose originals were most recently found gone (deleted at source,
    removed, account suspended), as RSS 2.0."""
    rows = await state.db.read(lambda c: newly_gone(c, FEED_ITEMS), no_rows())
    base = str(request.base_url).rstrip("/")
    return Response(gone_rss(base, rows), media_type="application/rss+xml; charset=utf-8")


@router.get("/export/backup", summary="The latest database backup (gzip)")
async def latest_backup(state: State) -> Response:
    """The newest `VACUUM INTO` backup the writer uploaded (SQLite, gzip-compressed)."""
    if state.store is None:
        raise HTTPException(503, "storage unavailable")
    try:
        keys = await asyncio.wait_for(state.store.list_keys(PREFIX), S3_TIMEOUT)
    except (StorageError, TimeoutError) as exc:
        raise HTTPException(502, "storage did not answer") from exc
    dates = backup_dates(keys)
    if not dates:
        raise HTTPException(404, "no backup yet")
    return await send_object(
        state, key_of_date(dates[-1]), "application/gzip", f"archive-{dates[-1]}.sqlite3.gz"
    )
