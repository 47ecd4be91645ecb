"""A WARC file (ISO 28500, gzipped per record, written with warcio) of raw HTTP exchanges:
the fetch plugin's own requests, and the browser's traffic the archiver's egress proxy saw
(services/archiver/egress/traffic.py). The one place that writes WARC records.

One `warcinfo` record, then a `request` + `response` pair per exchange (every redirect hop
and the final response), the response payload being the body bytes as they came off the
wire (Content-Encoding kept, chunked framing removed, so `Transfer-Encoding` is dropped from
the stored headers). `WARC-IP-Address` is the address actually connected to; a body cut at
a byte cap carries `WARC-Truncated: length`. The values of `Cookie`, `Set-Cookie`,
`Authorization` and `Proxy-Authorization` are replaced by `REDACTED` in both records: no
session of anyone reaches an archive. Each record is its own gzip member compressed at
level 1 (warcio's own writer uses level 9: four times the CPU for bodies that are mostly
compressed already). Replayable by standard tools (pywb, warcio's ArchiveIterator).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

Headers = Sequence[tuple[str, str]]
_HOP_BY_HOP = frozenset({"transfer-encoding"})
REDACTED_FIELDS = frozenset({"cookie", "set-cookie", "authorization", "proxy-authorization"})
"""Header fields whose values never reach a WARC."""
REDACTED = "REDACTED"


@dataclass(frozen=True)
class Exchange:
    """One HTTP request and its response, as sent and received."""

    url: str
    ip: str | None
    request_headers: Headers
    http_version: str
    status: int
    reason: str
    response_headers: Headers
    payload: Path | bytes | BinaryIO
    """The raw body (a file, bytes, or a readable, seekable file object)."""
    truncated: str | None = None
    """WARC-Truncated reason (`length`, `time`, `disconnect`), None when whole."""
    method: str = "GET"
    request_body: bytes = b""
    date: str | None = None
    """WARC-Date of both records (ISO 8601, UTC), when the request was sent; None: now."""


def redacted(headers: Headers) -> list[tuple[str, str]]:
    """headers with the values of REDACTED_FIELDS replaced."""
    return [(k, REDACTED if k.lower() in REDACTED_FIELDS else v) for k, v in headers]


class _GzipMembers:
    """A file wrapper that compresses what is written into one gzip member per record."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self._z = zlib.compressobj(1, zlib.DEFLATED, zlib.MAX_WBITS + 16)

    def write(self, data: bytes) -> int:
        self.out.write(self._z.compress(data))
        return len(data)

    def end_member(self) -> None:
        self.out.write(self._z.flush())
        self._z = zlib.compressobj(1, zlib.DEFLATED, zlib.MAX_WBITS + 16)

    def flush(self) -> None:
        """warcio flushes after each record; the member ends at end_member."""

    def tell(self) -> int:
        return self.out.tell()


class WarcLog:
    """Appends exchanges to one .warc.gz file."""

    def __init__(self, path: Path, software: str) -> None:
        self.path = path
        self._file: BinaryIO = path.open("wb")
        self._out = _GzipMembers(self._file)
        self._writer = WARCWriter(self._out, gzip=False)
        info = self._writer.create_warcinfo_record(
            path.name, {"software": software, "format": "WARC File Format 1.1"}
        )
        self._record(info)
        self.exchanges = 0

    def _record(self, record: Any) -> None:
        self._writer.write_record(record)
        self._out.end_member()

    def write(self, ex: Exchange) -> None:
        """Write the response and request records of one exchange."""
        parts = urlsplit(ex.url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        version = ex.http_version if ex.http_version.startswith("HTTP/") else "HTTP/1.1"
        dated = {"WARC-Date": ex.date} if ex.date else {}
        request = self._writer.create_warc_record(
            ex.url,
            "request",
            payload=BytesIO(ex.request_body),
            length=len(ex.request_body),
            http_headers=StatusAndHeaders(
                f"{ex.method} {target} {version}",
                redacted(ex.request_headers),
                is_http_request=True,
            ),
            warc_headers_dict=dict(dated),
        )
        extra = {**dated, **({"WARC-IP-Address": ex.ip} if ex.ip else {})}
        if ex.truncated:
            extra["WARC-Truncated"] = ex.truncated
        headers = [(k, v) for k, v in ex.response_headers if k.lower() not in _HOP_BY_HOP]
        status = StatusAndHeaders(
            f"{ex.status} {ex.reason}".strip(), redacted(headers), protocol=version
        )
        if isinstance(ex.payload, bytes):
            self._pair(request, ex.url, BytesIO(ex.payload), len(ex.payload), status, extra)
        elif isinstance(ex.payload, Path):
            with ex.payload.open("rb") as body:
                self._pair(request, ex.url, body, ex.payload.stat().st_size, status, extra)
        else:
            length = ex.payload.seek(0, 2)
            ex.payload.seek(0)
            self._pair(request, ex.url, ex.payload, length, status, extra)
        self.exchanges += 1

    def _pair(
        self,
        request: Any,
        url: str,
        body: BinaryIO,
        length: int,
        status: StatusAndHeaders,
        extra: dict[str, str],
    ) -> None:
        response = self._writer.create_warc_record(
            url, "response", payload=body, length=length, http_headers=status,
            warc_headers_dict=extra,
        )  # fmt: skip
        response_id = response.rec_headers.get_header("WARC-Record-ID")
        request.rec_headers.replace_header("WARC-Concurrent-To", response_id)
        self._record(response)
        self._record(request)

    def close(self) -> None:
        """Flush and close the file."""
        self._file.close()
