"""One exchange through the egress proxy: the server's response relayed to the browser,
its body capped by its decoded size, and the whole exchange handed to the snapshot's
browser WARC (traffic.py) once it ended.

The byte cap (`BROWSER_MAX_RESPONSE_MB`) counts the body as the page would get it: the
de-chunked bytes, or, for an encoded body (gzip, deflate, br, zstd, or a stack of them:
every coding Chromium decodes), its decoded size (by `shared.fetching.decoding`, counted a
MiB at a time, never held), so a compression bomb is cut like a huge body, over HTTPS too
now that the proxy sees HTTPS bodies. A body that is not what its coding says is counted as
it comes from there on (Chromium stops decoding it there too). A body cut at the cap ends
both connections; it is recorded up to the cap, marked `WARC-Truncated: length`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any

from services.archiver.egress import framing as http
from services.archiver.egress.traffic import TrafficLog
from shared.fetching.decoding import BoundedDecoder, CorruptEncoding, UnsupportedEncoding
from shared.fetching.warc import Exchange

log = logging.getLogger(__name__)

SPOOL_IN_MEMORY = 1 << 20
"""A recorded body stays in memory up to this, then goes to a temporary file."""


@dataclass
class Upstream:
    """One connection to a server (kept for the tunnel's next request when it can be)."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    ip: str
    responses: http.ResponseReader

    @property
    def reusable(self) -> bool:
        return self.responses.reusable and self.responses.ended and not self.writer.is_closing()


def _decoded(values: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in values]


class ExchangeRelay:
    """Relays responses within the cap and records exchanges (one per proxy)."""

    def __init__(self, egress_log: Any, max_bytes: int, traffic: TrafficLog | None) -> None:
        self.log = egress_log
        self.max_bytes = max_bytes
        self.traffic = traffic
        self._writes: set[asyncio.Task[None]] = set()

    async def response_head(
        self, upstream: Upstream, method: str, writer: asyncio.StreamWriter
    ) -> http.Response:
        """The final response head; informational (1xx) heads are passed on as they come."""
        while True:
            resp = await upstream.responses.head(method)
            if resp.status >= 200 or resp.status == 101:
                return resp
            writer.write(http.response_head(resp, close=False, chunked=False))

    async def body(
        self,
        url: str,
        req: http.Request,
        resp: http.Response,
        upstream: Upstream,
        writer: asyncio.StreamWriter,
        *,
        close: bool,
        sent: float,
        tap: Callable[[bytes], None] | None = None,
    ) -> bool:
        """Send the head, relay the body within the cap (each piece relayed also to tap,
        as it came), record the exchange. True when the browser's connection may carry
        another request."""
        chunked, close_after = http.framing(resp, req.method)
        close = close or close_after
        writer.write(http.response_head(resp, close=close, chunked=chunked))
        keep = self._spool()
        truncated: str | None = None
        total = inflated = 0
        decoder = body_decoder(resp)
        try:
            while (piece := await upstream.responses.body()) is not None:
                total += len(piece)
                if decoder is not None:
                    try:
                        inflated += self._decoded_size(decoder, piece)
                    except CorruptEncoding:
                        decoder = None  # not what it claims: count the bytes as they are
                if max(total, inflated) > self.max_bytes:
                    self.log.add(self.log.truncated, {"url": url, "bytes": total,
                                                      "inflated": inflated})  # fmt: skip
                    log.info("egress cut %s after %d bytes (%d inflated)", url, total, inflated)
                    truncated = "length"
                    break
                truncated = self._keep(keep, piece) or truncated
                if tap is not None:
                    tap(piece)
                writer.write(http.chunk(piece) if chunked else piece)
                await writer.drain()
        except http.BadMessage:
            truncated = "disconnect"
        whole = truncated is None or (truncated == "length" and upstream.responses.ended)
        if whole and chunked:
            writer.write(http.LAST_CHUNK)
        self._record(url, req, resp, upstream.ip, keep, truncated, sent)
        return whole and not close and upstream.responses.ended

    def _spool(self) -> IO[bytes] | None:
        if self.traffic is None or not self.traffic.open:
            return None
        return tempfile.SpooledTemporaryFile(SPOOL_IN_MEMORY)

    def _keep(self, keep: IO[bytes] | None, piece: bytes) -> str | None:
        """Record piece within the WARC's room; `length` when some of it did not fit."""
        if keep is None or self.traffic is None:
            return None
        room = self.traffic.reserve(len(piece))
        keep.write(piece[:room])
        return "length" if room < len(piece) else None

    def _record(
        self,
        url: str,
        req: http.Request,
        resp: http.Response,
        ip: str,
        keep: IO[bytes] | None,
        truncated: str | None,
        sent: float,
    ) -> None:
        if keep is None or self.traffic is None:
            return
        sent_headers = [(k, v) for k, v in req.headers if k.lower() not in http.HOP_BY_HOP]
        exchange = Exchange(
            url=url,
            ip=ip,
            request_headers=_decoded(sent_headers),
            http_version=f"HTTP/{resp.version}",
            status=resp.status,
            reason=resp.reason,
            response_headers=_decoded(resp.headers),
            payload=keep,  # type: ignore[arg-type]  # a SpooledTemporaryFile is a BinaryIO
            truncated=truncated,
            method=req.method,
            request_body=req.body,
            date=datetime.fromtimestamp(sent, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
        task = asyncio.create_task(self._write(exchange, keep))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _write(self, exchange: Exchange, keep: IO[bytes]) -> None:
        assert self.traffic is not None
        try:
            await self.traffic.add(exchange)
        except Exception:  # a record that cannot be written loses that record only
            log.exception("egress: recording %s failed", exchange.url)
        finally:
            keep.close()

    async def flush(self) -> None:
        """Wait until every exchange ended so far is written."""
        while self._writes:
            await asyncio.gather(*list(self._writes), return_exceptions=True)

    def _decoded_size(self, decoder: BoundedDecoder, data: bytes) -> int:
        """Bytes `data` decodes to, counted a MiB at a time (never held at once), no further
        than past the cap."""
        size = 0
        for out in decoder.feed(data):
            size += len(out)
            if size > self.max_bytes:
                break
        return size


def body_decoder(resp: http.Response) -> BoundedDecoder | None:
    """The bounded decoder of a response's Content-Encoding (gzip, deflate, br, zstd, or a
    stack of them), a MiB a piece; None for a body not encoded, and for a coding it does not
    know (Chromium knows no other either): such a body is counted as it comes."""
    try:
        decoder = BoundedDecoder((resp.field(b"content-encoding") or b"").decode("latin-1"),
                                 piece=1 << 20)  # fmt: skip
    except UnsupportedEncoding:
        return None
    return None if decoder.identity else decoder


async def copy_capped(
    src: asyncio.StreamReader, dst: asyncio.StreamWriter, idle_timeout: float
) -> None:
    """Copy src to dst until EOF or `idle_timeout` of silence (a WebSocket's frames)."""
    with contextlib.suppress(TimeoutError):
        while data := await asyncio.wait_for(src.read(http.CHUNK), idle_timeout):
            dst.write(data)
            await dst.drain()
    with contextlib.suppress(OSError, RuntimeError):
        if dst.can_write_eof():
            dst.write_eof()
