"""Query parameters people and scripts send: parsed strictly, refused with a clear 400."""

from __future__ import annotations

import base64
import binascii
import re
from datetime import date

from fastapi import HTTPException

from services.web.queries.links import Cursor

MAX_ID = 2**63 - 1
"""Largest SQLite integer: ids beyond it are answered 400/404, never an overflow."""
LIMIT_MAX = 1000
_CURSOR = re.compile(r"^[0-9T:.+\- Z]{1,40}\|[0-9]{1,19}$")
_REQUEST_ID = re.compile(r"^[0-9a-f]{32}$")


def encode_cursor(at: str, link_id: int) -> str:
    """An opaque cursor for the page after (at, link_id)."""
    return base64.urlsafe_b64encode(f"{at}|{link_id}".encode()).decode().rstrip("=")


def parse_cursor(value: str | None) -> Cursor | None:
    """The cursor, or 400 for anything we did not hand out."""
    if not value:
        return None
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode("ascii")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raw = ""
    if not _CURSOR.match(raw):
        raise HTTPException(400, "cursor: not a cursor this site gave out")
    at, _, link_id = raw.partition("|")
    if int(link_id) > MAX_ID:
        raise HTTPException(400, "cursor: out of range")
    return Cursor(at, int(link_id))


def parse_day(name: str, value: str | None) -> date | None:
    """A YYYY-MM-DD date (empty = unset)."""
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise HTTPException(400, f"{name}: give a date as YYYY-MM-DD") from None


def check_request_id(value: str) -> str:
    """A request id as /submit hands them out (32 hex digits)."""
    if not _REQUEST_ID.match(value):
        raise HTTPException(400, "request id: 32 hexadecimal digits expected")
    return value
