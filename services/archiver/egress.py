"""The egress guard: a small HTTP proxy every request of a snapshot's browser context uses.

Why a proxy and not only Playwright's route interception: a route handler sees the first
request of a redirect chain and none of the hops (Playwright's own test "should not work
with redirects"), so `302 Location: http://169.254.169.254/` would slip through; and Chromium
would resolve names itself, so a name could resolve to a public address for the check and to
a private one for the connection (DNS rebinding). The context's proxy sees every connection
Chromium opens (loopback too: Playwright adds `<-loopback>` to the bypass list), including
each redirect hop, subresources, frames, WebSockets and HTTPS tunnels (CONNECT). For each it
resolves the host through the process's DNS cache and checks every address with the one
judge of targets (`shared.targets.checked_host`, unless private targets are allowed), then
connects to an address it checked.

A request it cannot serve is answered at once with an explicit error response, never an
empty one (which Chromium reports as `ERR_EMPTY_RESPONSE`): `403` for a refused target,
`502` for a name that does not exist (`no_such_host`) or does not resolve for now (`dns`)
and for a connection that fails (`connect`), `504` for a timeout, each with
`X-Archiver-Error: <kind>` (a refusal also keeps `X-Archiver-Refused: 1`). A tunnel
(CONNECT) gets the same status line, so Chromium fails it at once
(`ERR_TUNNEL_CONNECTION_FAILED`); the failure is in the proxy's log, where the page session
finds why its main document failed.

No subresource may hold the page's load longer than `subresource_timeout`: a request that
has no response head by then (name lookup, connect and the server's answer together) is
answered `504`, and a tunnel whose server has not answered the browser's first bytes by
then (a host that accepts the connection and never speaks TLS) is cut. The page's main
document is exempt (`is_document`, told by the page session): it has the navigation's own
timeout.

It also caps the bytes one response may bring (`max_response_bytes`, counting the inflated
size of a gzip/deflate body that is not chunked): beyond it the connection is cut and the
URL is recorded as truncated. For HTTPS only the tunnel's bytes can be counted (compressed,
encrypted).

One proxy per snapshot context, so every refusal and failure is recorded against its
snapshot. A capture ends by closing the proxy, which cancels the connections still open:
that is normal and logged at DEBUG only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import zlib
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

from shared.errors import NoSuchHost, TargetRefused, TargetUnresolved
from shared.targets import IpAddress, checked_host, refused_address

log = logging.getLogger(__name__)
T = TypeVar("T")

HEAD_LIMIT = 64 * 1024
CHUNK = 64 * 1024
ErrorKind = Literal["refused", "no_such_host", "dns", "connect", "timeout"]
ERROR_STATUS: dict[ErrorKind, str] = {
    "refused": "403 Forbidden",
    "no_such_host": "502 Bad Gateway",
    "dns": "502 Bad Gateway",
    "connect": "502 Bad Gateway",
    "timeout": "504 Gateway Timeout",
}
"""The status line of the proxy's answer for each kind of failure (`X-Archiver-Error`)."""
ERROR_HEADER = "x-archiver-error"


class UpstreamError(Exception):
    """A request the proxy could not serve, and why (its `X-Archiver-Error` kind)."""

    def __init__(self, kind: ErrorKind, reason: str) -> None:
        super().__init__(reason)
        self.kind: ErrorKind = kind


@dataclass
class EgressPolicy:
    """Which addresses the browser may reach, and how long a request may take."""

    allow_private: bool = False
    """Tests and local demos: reach loopback/private addresses too."""
    refuse: Callable[[IpAddress], bool] = refused_address
    """Address predicate used when private targets are not allowed."""
    connect_timeout: float = 10.0
    """Seconds to resolve and connect to an upstream host."""
    subresource_timeout: float = 3.0
    """Seconds a request other than the page's main document may wait for its response
    head (lookup and connect included), or a tunnel for the server's first bytes."""
    unresponsive_s: float = 60.0
    """After a subresource's server let that bound pass, its other subresource requests
    (this page's and other snapshots') are answered 504 at once for this long: a page asks
    a dead ad server dozens of times, six at a time."""
    _unresponsive: dict[tuple[str, int], float] = field(default_factory=dict, repr=False)

    def unresponsive(self, host: str, port: int) -> bool:
        """Did host:port let a subresource's bound pass lately?"""
        until = self._unresponsive.get((host.lower(), port))
        return until is not None and until > time.monotonic()

    def mark_unresponsive(self, host: str, port: int) -> None:
        """host:port let a subresource's bound pass."""
        now = time.monotonic()
        if len(self._unresponsive) > 10_000:
            self._unresponsive = {k: v for k, v in self._unresponsive.items() if v > now}
        self._unresponsive[(host.lower(), port)] = now + self.unresponsive_s

    async def addresses(self, host: str, port: int) -> list[str]:
        """The checked addresses of host; raises UpstreamError (refused, dns, timeout)."""
        try:
            return await checked_host(
                host,
                port,
                allow_private=self.allow_private,
                timeout=self.connect_timeout,
                refuse=self.refuse,
            )
        except TargetUnresolved as exc:
            raise UpstreamError("dns", str(exc)) from exc
        except NoSuchHost as exc:
            raise UpstreamError("no_such_host", str(exc)) from exc
        except TargetRefused as exc:
            raise UpstreamError("refused", str(exc)) from exc


@dataclass
class EgressLog:
    """What the proxy refused, could not reach or cut, for the snapshot's response log."""

    refused: list[dict[str, object]] = field(default_factory=list)
    failed: list[dict[str, object]] = field(default_factory=list)
    truncated: list[dict[str, object]] = field(default_factory=list)
    connections: int = 0
    max_entries: int = 1000

    def add(self, bucket: list[dict[str, object]], entry: dict[str, object]) -> None:
        if len(bucket) < self.max_entries:
            bucket.append({**entry, "at": round(time.time(), 3)})

    def failure(self, url: str) -> dict[str, object] | None:
        """Why the proxy did not serve url, if it did not: a refusal or failure recorded
        for that URL, or for a tunnel to its origin (scheme, host and port compared)."""
        want = origin(url)
        for entry in (*self.refused, *self.failed):
            if entry.get("url") == url or (entry.get("tunnel") and entry.get("origin") == want):
                return entry
        return None


def origin(url: str) -> str:
    parts = urlsplit(url)
    default = 443 if parts.scheme in ("https", "wss") else 80
    try:
        port = parts.port or default
    except ValueError:
        port = default
    return f"{(parts.hostname or '').lower()}:{port}"


@dataclass
class Target:
    """What one proxy connection asks for."""

    method: str
    url: str
    host: str
    port: int
    version: str
    headers: list[str]
    started: float = field(default_factory=time.monotonic)

    @property
    def tunnel(self) -> bool:
        return self.method == "CONNECT"

    def entry(self, kind: ErrorKind, reason: str) -> dict[str, object]:
        """The proxy log's entry for this request not served."""
        origin = f"{self.host.lower()}:{self.port}"
        return {"url": self.url, "origin": origin, "tunnel": self.tunnel, "kind": kind,
                "reason": reason}  # fmt: skip


class EgressProxy:
    """An HTTP/CONNECT proxy on 127.0.0.1 that enforces an EgressPolicy."""

    def __init__(self, policy: EgressPolicy, max_response_bytes: int, idle_timeout: float) -> None:
        self.policy = policy
        self.max_response_bytes = max_response_bytes
        self.idle_timeout = idle_timeout
        self.log = EgressLog()
        self.is_document: Callable[[str, bool], bool] = lambda url, tunnel: False
        """(url, tunnel) -> whether the request is for the page's main document, which the
        subresource bound does not apply to (a tunnel's url is `https://host[:port]/`: its
        origin is compared); set by the page session."""
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
        """One browser connection, to its end. Never ends with an exception or cancelled:
        asyncio's stream server logs either at ERROR (its done callback asks a cancelled task
        for its exception), and a connection cut at the end of a capture is no error."""
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        self.log.connections += 1
        upstream: asyncio.StreamWriter | None = None
        try:
            upstream = await self._handle(reader, writer)
        except asyncio.CancelledError:
            log.debug("egress: connection cancelled (the capture ended)")
        except (OSError, TimeoutError, asyncio.IncompleteReadError, ValueError) as exc:
            log.debug("egress: %r", exc)
        except Exception:  # a bug here must not surface as asyncio's callback traceback
            log.exception("egress: connection failed")
        finally:
            self._tasks.discard(task)
            self._writers.discard(writer)
            for w in (writer, upstream):
                if w is not None:
                    w.transport.abort()

    async def _read_target(self, reader: asyncio.StreamReader) -> Target:
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
            return Target("CONNECT", url, host, int(port_s), version, headers)
        parts = urlsplit(target)
        if parts.scheme not in ("http", "ws") or not parts.hostname:
            return Target(method, target, "", 0, version, headers)
        return Target(method, target, parts.hostname, parts.port or 80, version, headers)

    async def _handle(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> asyncio.StreamWriter | None:
        t = await self._read_target(reader)
        if not t.host:
            await self._fail(writer, t, UpstreamError("refused", f"unsupported target {t.url!r}"))
            return None
        try:
            up_reader, upstream = await self._bounded(t, self._connect(t))
        except UpstreamError as exc:
            await self._fail(writer, t, exc)
            return None
        if t.tunnel:
            writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            await writer.drain()
            await self._tunnel(t, reader, writer, up_reader, upstream)
            return upstream
        parts = urlsplit(t.url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        upgrade = any(h.lower().startswith("upgrade:") for h in t.headers)
        kept = [h for h in t.headers if not h.lower().startswith(("proxy-", "connection:"))]
        kept.append("Connection: Upgrade" if upgrade else "Connection: close")
        request = f"{t.method} {path} {t.version}\r\n" + "".join(f"{k}\r\n" for k in kept)
        upstream.write((request + "\r\n").encode("latin-1"))
        up = asyncio.create_task(self._copy(reader, upstream, None))
        try:
            if upgrade:  # a WebSocket: the answer is relayed as it comes
                await self._copy(up_reader, writer, t.url)
                return upstream
            try:
                head = await self._bounded(t, self._response_head(up_reader))
            except UpstreamError as exc:
                await self._fail(writer, t, exc)
                return upstream
            await self._relay(up_reader, writer, t.url, head)
        finally:
            await _cancelled(up)
        return upstream

    async def _bounded(self, t: Target, step: Coroutine[Any, Any, T]) -> T:
        """Await step (a coroutine) within the request's time: a subresource has until
        `subresource_timeout` after it arrived, the page's main document the step's own
        timeouts. Raises UpstreamError("timeout") when the bound passed."""
        policy = self.policy
        if policy.unresponsive(t.host, t.port) and not self.is_document(t.url, t.tunnel):
            step.close()
            raise UpstreamError(
                "timeout", f"{t.host} left a request unanswered {policy.subresource_timeout:g} s"
            )
        task = asyncio.ensure_future(step)
        try:
            left = policy.subresource_timeout - (time.monotonic() - t.started)
            done, _ = await asyncio.wait({task}, timeout=max(0.0, left))
            if not done and not self.is_document(t.url, t.tunnel):
                policy.mark_unresponsive(t.host, t.port)
                raise UpstreamError("timeout", f"no answer within {policy.subresource_timeout:g} s")
            return await task
        except TimeoutError as exc:
            raise UpstreamError("timeout", f"{t.host}: {exc or 'timed out'}") from exc
        finally:
            await _cancelled(task)

    async def _connect(self, t: Target) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection to one of the host's checked addresses, tried in order."""
        addrs = await self.policy.addresses(t.host, t.port)
        errors: list[str] = []
        deadline = time.monotonic() + self.policy.connect_timeout
        for addr in addrs:
            try:
                return await asyncio.wait_for(
                    asyncio.open_connection(addr, t.port, limit=HEAD_LIMIT),
                    max(0.1, deadline - time.monotonic()),
                )
            except TimeoutError as exc:
                raise UpstreamError("timeout", f"connect to {t.host} ({addr}) timed out") from exc
            except OSError as exc:
                errors.append(f"{addr}: {exc.strerror or exc}")
        raise UpstreamError("connect", f"cannot connect to {t.host}:{t.port}: {'; '.join(errors)}")

    async def _response_head(self, up_reader: asyncio.StreamReader) -> bytes:
        try:
            return await asyncio.wait_for(up_reader.readuntil(b"\r\n\r\n"), self.idle_timeout)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError) as exc:
            raise UpstreamError("connect", f"no response head: {exc!r}") from exc

    async def _fail(self, writer: asyncio.StreamWriter, t: Target, exc: UpstreamError) -> None:
        """Record why t was not served and answer the browser with an explicit error."""
        entry = t.entry(exc.kind, str(exc))
        if exc.kind == "refused":
            self.log.add(self.log.refused, entry)
            log.info("egress refused %s: %s", t.url, exc)
        else:
            self.log.add(self.log.failed, entry)
            log.debug("egress failed %s: %s", t.url, exc)
        body = b"" if t.tunnel else f"the archiver's egress proxy: {exc}\n".encode()
        refused = "X-Archiver-Refused: 1\r\n" if exc.kind == "refused" else ""
        writer.write(
            f"HTTP/1.1 {ERROR_STATUS[exc.kind]}\r\nContent-Type: text/plain\r\n"
            f"X-Archiver-Error: {exc.kind}\r\n{refused}"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        with contextlib.suppress(OSError):
            await writer.drain()

    async def _tunnel(
        self,
        t: Target,
        c_reader: asyncio.StreamReader,
        c_writer: asyncio.StreamWriter,
        u_reader: asyncio.StreamReader,
        u_writer: asyncio.StreamWriter,
    ) -> None:
        """Relay a tunnel both ways; a subresource's server has `subresource_timeout` after
        the browser's first bytes to answer (a TLS server answers its hello at once)."""
        asked, answered = asyncio.Event(), asyncio.Event()
        up = asyncio.create_task(self._copy(c_reader, u_writer, None, first=asked))
        down = asyncio.create_task(self._copy(u_reader, c_writer, t.url, first=answered))
        watch = asyncio.create_task(self._watch_tunnel(t, asked, answered, down))
        try:
            await down
        except asyncio.CancelledError:
            if not (watch.done() and not watch.cancelled() and watch.result()):
                raise  # not the watch's cut: this connection itself is cancelled
        finally:
            for task in (up, watch):
                await _cancelled(task)

    async def _watch_tunnel(
        self, t: Target, asked: asyncio.Event, answered: asyncio.Event, down: asyncio.Task[None]
    ) -> bool:
        """Cut the tunnel (cancel `down`) when its server has not answered in time; True
        when it did."""
        await asked.wait()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(answered.wait(), self.policy.subresource_timeout)
        if answered.is_set() or self.is_document(t.url, True):
            return False
        self.policy.mark_unresponsive(t.host, t.port)
        reason = f"no answer within {self.policy.subresource_timeout:g} s"
        self.log.add(self.log.failed, t.entry("timeout", reason))
        log.debug("egress cut tunnel %s: %s", t.url, reason)
        down.cancel()
        return True

    async def _relay(
        self, src: asyncio.StreamReader, dst: asyncio.StreamWriter, url: str, head: bytes
    ) -> None:
        """Send the response head (connection fields replaced by `Connection: close`), then
        its body, byte-capped: raw bytes, or inflated bytes for a gzip/deflate body."""
        lines = [
            ln
            for ln in head.decode("latin-1").split("\r\n")
            if ln and not ln.lower().startswith(("connection:", "keep-alive:"))
        ]
        fields = {k.strip().lower(): v.strip().lower() for k, _, v in
                  (ln.partition(":") for ln in lines[1:])}  # fmt: skip
        decoder = None
        if fields.get("content-encoding") in ("gzip", "x-gzip", "deflate") and (
            "chunked" not in fields.get("transfer-encoding", "")
        ):
            decoder = zlib.decompressobj(47)  # gzip or zlib header, detected
        dst.write(("\r\n".join([*lines, "Connection: close"]) + "\r\n\r\n").encode("latin-1"))
        await self._copy(src, dst, url, decoder=decoder)

    async def _copy(
        self,
        src: asyncio.StreamReader,
        dst: asyncio.StreamWriter,
        url: str | None,
        *,
        decoder: Any = None,
        first: asyncio.Event | None = None,
    ) -> None:
        """Copy src to dst until EOF; the download direction (url set) is byte-capped: raw
        bytes, or inflated bytes when a decoder is given (a compression bomb is cut too).
        `first` is set when the first bytes arrive."""
        total = inflated = 0
        while True:
            data = await asyncio.wait_for(src.read(CHUNK), self.idle_timeout)
            if not data:
                with contextlib.suppress(OSError, RuntimeError):
                    if dst.can_write_eof():
                        dst.write_eof()
                return
            if first is not None:
                first.set()
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


async def _cancelled(task: asyncio.Future[Any]) -> None:
    """Cancel a helper task and wait for it to end, whatever it ended with."""
    if not task.done():
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
