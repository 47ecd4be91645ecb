"""A WARC file (ISO 28500, gzipped per record, written with warcio) of raw HTTP exchanges.

One `warcinfo` record, then a `request` + `response` pair per exchange (every redirect hop
and the final response), the response payload being the body bytes as they came off the
wire (Content-Encoding kept, chunked framing removed, so `Transfer-Encoding` is dropped from
the stored headers). `WARC-IP-Address` is the address actually connected to; a body cut at
the byte cap carries `WARC-Truncated: length`. Replayable by standard tools (pywb,
warcio's ArchiveIterator).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urlsplit

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

Headers = Sequence[tuple[str, str]]
_HOP_BY_HOP = frozenset({"transfer-encoding"})


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
    payload: Path | bytes
    """The raw body (a file, or bytes)."""
    truncated: str | None = None
    """WARC-Truncated reason (`length`, `time`, `disconnect`), None when whole."""


class WarcLog:
    """Appends exchanges to one .warc.gz file."""

    def __init__(self, path: Path, software: str) -> None:
        self.path = path
        self._file: BinaryIO = path.open("wb")
        self._writer = WARCWriter(self._file, gzip=True)
        info = self._writer.create_warcinfo_record(
            path.name, {"software": software, "format": "WARC File Format 1.1"}
        )
        self._writer.write_record(info)
        self.exchanges = 0

    def write(self, ex: Exchange) -> None:
        """Write the request and response records of one exchange."""
        parts = urlsplit(ex.url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        version = ex.http_version if ex.http_version.startswith("HTTP/") else "HTTP/1.1"
        request = self._writer.create_warc_record(
            ex.url,
            "request",
            payload=BytesIO(b""),
            length=0,
            http_headers=StatusAndHeaders(
                f"GET {target} {version}",
                list(ex.request_headers),
                is_http_request=True,
            ),
        )
        extra = {"WARC-IP-Address": ex.ip} if ex.ip else {}
        if ex.truncated:
            extra["WARC-Truncated"] = ex.truncated
        headers = [(k, v) for k, v in ex.response_headers if k.lower() not in _HOP_BY_HOP]
        status = StatusAndHeaders(f"{ex.status} {ex.reason}".strip(), headers, protocol=version)
        if isinstance(ex.payload, bytes):
            self._pair(request, ex.url, BytesIO(ex.payload), len(ex.payload), status, extra)
        else:
            with ex.payload.open("rb") as body:
                self._pair(request, ex.url, body, ex.payload.stat().st_size, status, extra)
        self.exchanges += 1

    def _pair(
        self,
        request: object,
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
        self._writer.write_request_response_pair(request, response)

    def close(self) -> None:
        """Flush and close the file."""
        self._file.close()
