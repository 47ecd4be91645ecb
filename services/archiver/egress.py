"""The egress guard: a small HTTP proxy every request of a snapshot's browser context uses.

Why a proxy and not only Playwright's route interception: a route handler sees the first
request of a redirect chain and none of the hops (Playwright's own test "should not work
with redirects"), so `302 Location: http://169.254.169.254/` would slip through; and Chromium
would resolve names itself, so a name could resolve to a public address for the check and to
a private one for the connection (DNS rebinding). The context's proxy sees every connection
Chromium opens (loopback too: Playwright adds `<-loopback>` to the bypass list), including
each redirect hop, subresources, frames, WebSockets and HTTPS tunnels (CONNECT). For each it
resolves the host once, checks every address with `shared.targets.refused_address` (unless
private targets are allowed) and connects to the address it checked.

It also caps the bytes one response may bring (`max_response_bytes`, counting the inflated
size of a gzip/deflate body that is not chunked): beyond it the connection is cut and the
URL is recorded as truncated. For HTTPS only the tunnel's bytes can be counted (compressed,
encrypted).

One proxy per snapshot context, so every refusal is recorded against its snapshot.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from shared.targets import refused_address

log = logging.getLogger(__name__)

HEAD_LIMIT = 64 * 1024
CHUNK = 64 * 1024
REFUSED_BODY = b"refused by the archiver's target policy\n"
IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class Refused(Exception):
    """The target policy refused a host."""


@dataclass
class EgressPolicy:
    """Which addresses the browser may reach."""

    allow_private: bool = False
    """Tests and local demos: reach loopback/private addresses too."""
    refuse: Callable[[IpAddress], bool] = refused_address
    """Address predicate used when private targets are not allowed."""
    connect_timeout: float = 10.0
    """Seconds to resolve and connect to an upstream host."""

    async def resolve(self, host: str, port: int) -> str:
        """The address to connect to; raises Refused when any address is refused."""
        loop = asyncio.get_running_loop()
        try:
            infos = await asyncio.wait_for(
                loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), self.connect_timeout
            )
        except (OSError, TimeoutError) as exc:
            raise ConnectionError(f"cannot resolve {host}: {exc}") from exc
        addrs = list(dict.fromkeys(str(i[4][0]) for i in infos))
        if not addrs:
            raise ConnectionError(f"{host} has no address")
        if not self.allow_private:
            for addr in addrs:
                if self.refuse(ipaddress.ip_address(addr.split("%", 1)[0])):
                    raise Refused(f"{host} resolves to non-public address {addr}")
        return addrs[0]


@dataclass
class EgressLog:
    """What the proxy refused or cut, for the snapshot's response log."""

    refused: list[dict[str, object]] = field(default_factory=list)
    truncated: list[dict[str, object]] = field(default_factory=list)
    connections: int = 0
    max_entries: int = 1000

    def add(self, bucket: list[dict[str, object]], entry: dict[str, object]) -> None:
        if len(bucket) < self.max_entries:
            bucket.append({**entry, "at": round(time.time(), 3)})

    def refused_url(self, url: str) -> dict[str, object] | None:
        """The refusal recorded for url (scheme, host and port compared), if any."""
        want = _origin(url)
        for entry in self.refused:
            if entry.get("origin") == want:
                return entry
        return None


def _origin(url: str) -> str:
    parts = urlsplit(url)
    default = 443 if parts.scheme in ("https", "wss") else 80
    try:
        port = parts.port or default
    except ValueError:
        port = default
    return f"{(parts.hostname or '').lower()}:{port}"


class EgressProxy:
    """An HTTP/CONNECT proxy on 127.0.0.1 that enforces an EgressPolicy."""

    def __init__(self, policy: EgressPolicy, max_response_bytes: int, idle_timeout: float) -> None:
        self.policy = policy
        self.max_response_bytes = max_response_bytes
        self.idle_timeout = idle_timeout
        self.log = EgressLog()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> str:
        """Listen on a free loopback port; returns the proxy URL for the browser context."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=HEAD_LIMIT)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def close(self) -> None:
        """Stop listening and cut every open connection."""
        if self._server is not None:
            self._server.close()
        for w in list(self._writers):
            w.transport.abort()
        for t in list(self._tasks):
            t.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        self.log.connections += 1
        upstream: asyncio.StreamWriter | None = None
        try:
            upstream = await self._handle(reader, writer)
        except (ConnectionError, TimeoutError, asyncio.IncompleteReadError, ValueError) as exc:
            log.debug("egress: %s", exc)
        finally:
            self._tasks.discard(task)
            self._writers.discard(writer)
            for w in (writer, upstream):
                if w is not None:
                    w.transport.abort()

    async def _handle(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> asyncio.StreamWriter | None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.idle_timeout)
        except asyncio.LimitOverrunError as exc:
            raise ValueError("request head too large") from exc
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = lines[0].split(" ", 2)
        headers = [ln for ln in lines[1:] if ln]
        if method.upper() == "CONNECT":
            host, _, port_s = target.rpartition(":")
            host = host.strip("[]")
            url = f"https://{host}" + ("" if port_s == "443" else f":{port_s}") + "/"
            port = int(port_s)
        else:
            parts = urlsplit(target)
            if parts.scheme not in ("http", "ws") or not parts.hostname:
                await self._refuse(writer, target, f"unsupported proxy target {target!r}")
                return None
            host, port, url = parts.hostname, parts.port or 80, target
        try:
            addr = await self.policy.resolve(host, port)
        except Refused as exc:
            await self._refuse(
                writer, url, str(exc), host=host, port=port, tunnel=method == "CONNECT"
            )
            return None
        up_reader, upstream = await asyncio.wait_for(
            asyncio.open_connection(addr, port, limit=HEAD_LIMIT), self.policy.connect_timeout
        )
        if method.upper() == "CONNECT":
            writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            await writer.drain()
            await self._pipe_both(reader, writer, up_reader, upstream, url)
            return upstream
        parts = urlsplit(target)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        upgrade = any(h.lower().startswith("upgrade:") for h in headers)
        kept = [h for h in headers if not h.lower().startswith(("proxy-", "connection:"))]
        if not upgrade:
            kept.append("Connection: close")
        else:
            kept.append("Connection: Upgrade")
        request = f"{method} {path} {version}\r\n" + "".join(f"{k}\r\n" for k in kept) + "\r\n"
        upstream.write(request.encode("latin-1"))
        await self._pipe_both(reader, writer, up_reader, upstream, url, rewrite_head=not upgrade)
        return upstream

    async def _refuse(
        self,
        writer: asyncio.StreamWriter,
        url: str,
        reason: str,
        *,
        host: str = "",
        port: int = 0,
        tunnel: bool = False,
    ) -> None:
        origin = f"{host.lower()}:{port}" if host else _origin(url)
        self.log.add(self.log.refused, {"url": url, "origin": origin, "reason": reason})
        log.info("egress refused %s: %s", url, reason)
        body = REFUSED_BODY
        writer.write(
            b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Archiver-Refused: 1\r\n"
            + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + (b"" if tunnel else body)
        )
        with contextlib.suppress(ConnectionError):
            await writer.drain()

    async def _pipe_both(
        self,
        c_reader: asyncio.StreamReader,
        c_writer: asyncio.StreamWriter,
        u_reader: asyncio.StreamReader,
        u_writer: asyncio.StreamWriter,
        url: str,
        *,
        rewrite_head: bool = False,
    ) -> None:
        up = asyncio.create_task(self._copy(c_reader, u_writer, None))
        down = asyncio.create_task(self._copy(u_reader, c_writer, url, rewrite_head=rewrite_head))
        try:
            await down
        finally:
            up.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionError, TimeoutError):
                await up

    async def _copy(
        self,
        src: asyncio.StreamReader,
        dst: asyncio.StreamWriter,
        url: str | None,
        *,
        rewrite_head: bool = False,
    ) -> None:
        """Copy src to dst until EOF; the download direction (url set) is byte-capped: raw
        bytes, or inflated bytes for a gzip/deflate body (a compression bomb is cut too)."""
        total = inflated = 0
        decoder = None
        if rewrite_head:
            head = await asyncio.wait_for(src.readuntil(b"\r\n\r\n"), self.idle_timeout)
            lines = [
                ln
                for ln in head.decode("latin-1").split("\r\n")
                if ln and not ln.lower().startswith(("connection:", "keep-alive:"))
            ]
            fields = {k.strip().lower(): v.strip().lower() for k, _, v in
                      (ln.partition(":") for ln in lines[1:])}  # fmt: skip
            if fields.get("content-encoding") in ("gzip", "x-gzip", "deflate") and (
                "chunked" not in fields.get("transfer-encoding", "")
            ):
                decoder = zlib.decompressobj(47)  # gzip or zlib header, detected
            dst.write(("\r\n".join([*lines, "Connection: close"]) + "\r\n\r\n").encode("latin-1"))
        while True:
            data = await asyncio.wait_for(src.read(CHUNK), self.idle_timeout)
            if not data:
                with contextlib.suppress(OSError, RuntimeError):
                    if dst.can_write_eof():
                        dst.write_eof()
                return
            total += len(data)
            if decoder is not None:
                try:
                    inflated += self._inflated_size(decoder, data)
                except zlib.error:
                    decoder = None  # not what it claims: count raw bytes only
            if url is not None and max(total, inflated) > self.max_response_bytes:
                self.log.add(self.log.truncated, {"url": url, "bytes": total, "inflated": inflated})
                log.info("egress cut %s after %d bytes (%d inflated)", url, total, inflated)
                return
            dst.write(data)
            await dst.drain()

    def _inflated_size(self, decoder: Any, data: bytes) -> int:
        """Bytes `data` inflates to, counted a MiB at a time (never held at once)."""
        size, buf = 0, data
        while buf and size <= self.max_response_bytes:
            size += len(decoder.decompress(buf, 1 << 20))
            buf = decoder.unconsumed_tail
        return size
