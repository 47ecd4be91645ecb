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

HTTPS is intercepted (interception.py): the proxy makes its own verified TLS connection to
the server, answers the CONNECT, and ends the browser's TLS with a certificate of the
archiver's own CA, so it sees every request and response of the page as plain HTTP/1.1
(framing.py), bounds each, caps each body by its decoded size, and records each in the
snapshot's browser WARC (exchange.py, traffic.py).

A request it cannot serve is answered at once with an explicit error response, never an
empty one (which Chromium reports as `ERR_EMPTY_RESPONSE`): `403` for a refused target,
`502` for a name that does not exist (`no_such_host`) or does not resolve for now (`dns`),
for a connection that fails (`connect`) and a server certificate that does not verify
(`tls`), `504` for a timeout, each with `X-Archiver-Error: <kind>` (a refusal also keeps
`X-Archiver-Refused: 1`). A CONNECT gets the same status line, so Chromium fails the tunnel
at once (`ERR_TUNNEL_CONNECTION_FAILED`); the failure is in the proxy's log, where the page
session finds why its main document failed.

No subresource may hold the page's load longer than `subresource_timeout`: a request that
has no response head by then (name lookup, connect, TLS and the server's answer together)
is answered `504`; when its host accepted nothing or sent nothing at all (not a slow
answer: EgressPolicy.bound_passed decides), the host's later subresource requests are
answered at once for a while (a minute, doubling each time it is marked again). The page's
main document and its redirects are exempt from both, whatever mark the host carries
(`expect_document`, told by the page session before the browser asks): they have the
navigation's own timeout. As the page's HTML document passes, the proxy reads which
origins it will load from and connects to them before the browser asks (warm.py): a
host that never answers is then known when the page's late requests come (images, a tag's
script), and an answering host's connection is the one the browser's first request to it
gets.

One proxy per snapshot context, so every refusal, failure and exchange is recorded against
its snapshot. A capture ends by closing the proxy, which cancels the connections still
open: that is normal and logged at DEBUG only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urljoin, urlsplit

from services.archiver.egress import framing as http
from services.archiver.egress.exchange import ExchangeRelay, Upstream, copy_capped
from services.archiver.egress.interception import Interceptor
from services.archiver.egress.policy import (
    ERROR_STATUS,
    EgressLog,
    EgressPolicy,
    ErrorKind,
    UpstreamError,
)
from services.archiver.egress.traffic import TrafficLog
from services.archiver.egress.warm import DocumentTap, Origin, subresource_origins
from shared.targets import origin_key

log = logging.getLogger(__name__)
T = TypeVar("T")

HEAD_LIMIT = 64 * 1024
MAX_REQUEST_BODY = 16 * 1024 * 1024
"""A request body the browser sends (a form, an API call) is read whole, up to this."""
WARM_MAX_AGE_S = 5.0
"""A warmed connection the browser has not claimed by then is not handed to it (a server
may close an idle connection): the browser's request connects afresh."""
HTML_TYPES = (b"text/html", b"application/xhtml+xml")


@dataclass
class Warm:
    """A connection the proxy opened to an origin the page's document names, before the
    browser asked for it (warm.py)."""

    task: asyncio.Task[Upstream]
    started: float = field(default_factory=time.monotonic)


@dataclass
class Target:
    """What one request (or tunnel) asks for."""

    method: str
    url: str
    host: str
    port: int
    started: float = field(default_factory=time.monotonic)
    navigation: bool = False
    """The browser says it is a top-level navigation (`Sec-Fetch-Dest: document`, which
    Chromium sends to secure and local origins only)."""

    @property
    def tunnel(self) -> bool:
        return self.method == "CONNECT"

    def entry(self, kind: ErrorKind, reason: str) -> dict[str, object]:
        """The proxy log's entry for this request not served."""
        where = f"{self.host.lower()}:{self.port}"
        return {"url": self.url, "origin": where, "tunnel": self.tunnel, "kind": kind,
                "reason": reason}  # fmt: skip


class EgressProxy:
    """An HTTP/CONNECT proxy on 127.0.0.1 that enforces an EgressPolicy."""

    def __init__(
        self,
        policy: EgressPolicy,
        max_response_bytes: int,
        idle_timeout: float,
        *,
        interceptor: Interceptor | None = None,
        traffic: TrafficLog | None = None,
    ) -> None:
        self.policy = policy
        self.max_response_bytes = max_response_bytes
        self.idle_timeout = idle_timeout
        self.log = EgressLog()
        self.is_document: Callable[[str, bool], bool] = lambda url, tunnel: False
        """(url, tunnel) -> whether the browser's events name the request the page's main
        document (a CONNECT's url is `https://host[:port]/`: its origin is compared); set by
        the page session. They come after the proxy has the request: a navigation the page
        session starts is named before (`expect_document`); this catches those the page
        starts itself."""
        self._own_interceptor = interceptor is None
        self.interceptor = interceptor or Interceptor()
        self.relay = ExchangeRelay(self.log, max_response_bytes, traffic)
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._warm: dict[tuple[str, int, bool], Warm] = {}
        self._asked: set[tuple[str, int, bool]] = set()
        self._documents: set[str] = set()
        self._document_origins: set[str] = set()

    def expect_document(self, url: str) -> None:
        """The page is about to load url as its main document (the page session says so
        before the browser asks): its request, its tunnel and every redirect the proxy
        relays for it are the document from their first byte, whatever the browser's events
        say later."""
        self._documents.add(_document_key(url))
        self._document_origins.add(origin_key(url))

    def _is_document(self, t: Target) -> bool:
        """Is t the page's main document (or its tunnel), which neither the subresource
        bound nor an unresponsive mark ever touches? Known before it comes (expected, or
        a redirect of it), said by the browser's request, or by its events
        (`is_document`: a navigation the page started itself)."""
        if t.tunnel:
            known = origin_key(t.url) in self._document_origins
        else:
            known = t.navigation or _document_key(t.url) in self._documents
        return known or self.is_document(t.url, t.tunnel)

    async def start(self) -> str:
        """Listen on a free loopback port; returns the proxy URL for the browser context."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=HEAD_LIMIT)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def close(self) -> None:
        """Stop listening, cut every open connection, write what was recorded."""
        if self._server is not None:
            self._server.close()
        for w in list(self._writers):
            w.transport.abort()
        for t in list(self._tasks):
            t.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        # a claimed warm connection went with its request (cancelled or cut above); an
        # unclaimed one is cut here
        for warm in self._warm.values():
            await _cancelled(warm.task)
            if not warm.task.cancelled() and warm.task.exception() is None:
                warm.task.result().writer.transport.abort()
        await self.relay.flush()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None
        if self._own_interceptor:
            self.interceptor.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One browser connection, to its end. Never ends with an exception or cancelled:
        asyncio's stream server logs either at ERROR (its done callback asks a cancelled task
        for its exception), and a connection cut at the end of a capture is no error."""
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        self.log.connections += 1
        upstream: list[Upstream] = []
        try:
            await self._handle(reader, writer, upstream)
        except asyncio.CancelledError:
            log.debug("egress: connection cancelled (the capture ended)")
        except (OSError, TimeoutError, http.BadMessage, ValueError) as exc:
            log.debug("egress: %r", exc)
        except Exception:  # a bug here must not surface as asyncio's callback traceback
            log.exception("egress: connection failed")
        finally:
            self._tasks.discard(task)
            self._writers.discard(writer)
            for w in (writer, *(u.writer for u in upstream)):
                w.transport.abort()

    async def _handle(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, opened: list[Upstream]
    ) -> None:
        requests = http.RequestReader(reader, self.idle_timeout, MAX_REQUEST_BODY)
        req = await requests.next()
        if req is None:
            return
        if req.method == "CONNECT":
            await self._intercept(req, reader, writer, opened)
            return
        parts = urlsplit(req.target)
        t = Target(req.method, req.target, parts.hostname or "", 0, navigation=_navigation(req))
        if parts.scheme not in ("http", "ws") or not t.host:
            await self._fail(writer, t, UpstreamError("refused", f"unsupported target {t.url!r}"))
            return
        try:
            t.port = parts.port or 80
            upstream = await self._bounded(t, self._connect(t, tls=False))
        except (UpstreamError, ValueError) as exc:
            error = exc if isinstance(exc, UpstreamError) else UpstreamError("refused", str(exc))
            await self._fail(writer, t, error)
            return
        opened.append(upstream)
        await self._exchange(t, req, requests, upstream, writer, close=True)

    async def _intercept(
        self,
        req: http.Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        opened: list[Upstream],
    ) -> None:
        """A CONNECT: the verified TLS connection to the server first (its failure is the
        CONNECT's answer), then the browser's TLS ended here and its requests relayed."""
        host, _, port_s = req.target.rpartition(":")
        host = host.strip("[]")
        base = f"https://{host}" + ("" if port_s == "443" else f":{port_s}")
        t = Target("CONNECT", base + "/", host, int(port_s) if port_s.isdigit() else 0)
        if not t.port:
            await self._fail(writer, t, UpstreamError("refused", f"bad CONNECT {req.target!r}"))
            return
        try:
            upstream: Upstream | None = await self._bounded(t, self._connect(t, tls=True))
        except UpstreamError as exc:
            await self._fail(writer, t, exc)
            return
        assert upstream is not None
        opened.append(upstream)
        writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        await writer.drain()
        await writer.start_tls(self.interceptor.server_context(host))
        requests = http.RequestReader(reader, self.idle_timeout, MAX_REQUEST_BODY)
        while (inner := await requests.next()) is not None:
            target = inner.target if inner.target.startswith("/") else "/" + inner.target
            t = Target(inner.method, base + target, host, t.port, navigation=_navigation(inner))
            if upstream is None or not upstream.reusable:
                try:
                    upstream = await self._bounded(t, self._connect(t, tls=True))
                except UpstreamError as exc:
                    await self._fail(writer, t, exc)
                    return
                opened.append(upstream)
            if not await self._exchange(t, inner, requests, upstream, writer, close=False):
                return

    async def _exchange(
        self,
        t: Target,
        req: http.Request,
        requests: http.RequestReader,
        upstream: Upstream,
        writer: asyncio.StreamWriter,
        *,
        close: bool,
    ) -> bool:
        """Relay one request and its response; True when the browser's connection may carry
        the next request."""
        parts = urlsplit(t.url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        upstream.writer.write(http.request_head(req, path, close=False) + req.body)
        if req.upgrade:  # a WebSocket: relayed as it comes, not recorded
            upstream.writer.write(requests.rest)
            up = asyncio.create_task(
                copy_capped(requests.reader, upstream.writer, self.idle_timeout)
            )
            try:
                await copy_capped(upstream.reader, writer, self.idle_timeout)
            finally:
                await _cancelled(up)
            return False
        sent = time.time()
        try:
            head = self.relay.response_head(upstream, req.method, writer)
            resp = await self._bounded(t, head, upstream)
        except UpstreamError as exc:
            await self._fail(writer, t, exc)
            return False
        self.policy.answered(t.host, t.port)
        location = resp.field(b"location")
        if location and 300 <= resp.status < 400 and self._is_document(t):
            self.expect_document(urljoin(t.url, location.decode("latin-1")))
        tap = self._document_tap(req, resp)
        more = await self.relay.body(
            t.url, req, resp, upstream, writer, close=close or not req.keep_alive, sent=sent,
            tap=tap.feed if tap else None,
        )  # fmt: skip
        if tap is not None and self._is_document(t):
            self._warm_up(subresource_origins(tap.body, t.url, self.policy.warm_origins))
        return more

    def _document_tap(self, req: http.Request, resp: http.Response) -> DocumentTap | None:
        """A tap on the body when it may be the page's HTML document and warming is on:
        whether it is, is decided once the body has passed (the page session learns of its
        main document from Playwright's events, which may come after the proxy's answer;
        Chromium's `Sec-Fetch-Dest: document`, sent to secure and local origins, says so at
        once)."""
        if self.policy.warm_origins <= self.log.warmed or not 200 <= resp.status < 300:
            return None
        if (req.field(b"sec-fetch-dest") or b"document") != b"document":
            return None  # a frame, a script's fetch, ...
        kind = (resp.field(b"content-type") or b"").split(b";")[0].strip().lower()
        if kind not in HTML_TYPES:
            return None
        return DocumentTap(resp.field(b"content-encoding") or b"")

    def _warm_up(self, origins: list[Origin]) -> None:
        """Connect to each origin the browser has not asked for yet, within the
        subresource bound (a timeout marks the host unresponsive, EgressPolicy); at most
        `warm_origins` for the page in all."""
        for scheme, host, port in origins:
            if self.log.warmed >= self.policy.warm_origins:
                return
            key = (host, port, scheme == "https")
            if key in self._asked or key in self._warm or self.policy.unresponsive(host, port):
                continue
            t = Target("GET", f"{scheme}://{host}:{port}/", host, port)
            task = asyncio.create_task(self._bounded(t, self._open(t, tls=key[2])))
            task.add_done_callback(_retrieved)
            self._warm[key] = Warm(task)
            self.log.warmed += 1

    async def _connect(self, t: Target, *, tls: bool) -> Upstream:
        """A connection for t: the warmed one to its origin if there is one (awaited if
        still connecting), else a new one."""
        key = (t.host.lower(), t.port, tls)
        self._asked.add(key)
        warm = self._warm.pop(key, None)
        if warm is not None:
            try:
                up = await warm.task
            except UpstreamError as exc:
                if exc.kind == "timeout" and not self._is_document(t):
                    raise  # the bound passed while warming: as if this request waited it
                log.debug("egress: warming %s failed (%s); connecting afresh", t.host, exc)
            except (OSError, ValueError) as exc:
                log.debug("egress: warming %s failed (%r); connecting afresh", t.host, exc)
            else:
                if time.monotonic() - warm.started <= WARM_MAX_AGE_S and _open_still(up):
                    return up
                up.writer.transport.abort()
        return await self._open(t, tls=tls)

    async def _bounded(
        self, t: Target, step: Coroutine[Any, Any, T], upstream: Upstream | None = None
    ) -> T:
        """Await step (a coroutine) within the request's time: a subresource has until
        `subresource_timeout` after it arrived, the page's main document the step's own
        timeouts. `upstream`: the connection step awaits the response on (None while
        connecting). Raises UpstreamError("timeout") when the bound passed; the policy
        decides whether the host is marked unresponsive for it."""
        policy = self.policy
        if policy.unresponsive(t.host, t.port) and not self._is_document(t):
            step.close()
            raise UpstreamError(
                "timeout", f"{t.host} left a request unanswered {policy.subresource_timeout:g} s"
            )
        received = upstream.responses.received if upstream is not None else 0
        task = asyncio.ensure_future(step)
        try:
            left = policy.subresource_timeout - (time.monotonic() - t.started)
            done, _ = await asyncio.wait({task}, timeout=max(0.0, left))
            if not done and not self._is_document(t):
                heard = upstream is not None and upstream.responses.received > received
                policy.bound_passed(t.host, t.port, connected=upstream is not None, heard=heard)
                raise UpstreamError("timeout", f"no answer within {policy.subresource_timeout:g} s")
            return await task
        except TimeoutError as exc:
            raise UpstreamError("timeout", f"{t.host}: {exc or 'timed out'}") from exc
        except http.BadMessage as exc:
            raise UpstreamError("connect", str(exc)) from exc
        finally:
            await _cancelled(task)

    async def _open(self, t: Target, *, tls: bool) -> Upstream:
        """A connection to one of the host's checked addresses, tried in order (for HTTPS,
        TLS verified against the system's roots and the host name)."""
        addrs = await self.policy.addresses(t.host, t.port)
        errors: list[str] = []
        deadline = time.monotonic() + self.policy.connect_timeout
        ctx = self.interceptor.upstream if tls else None
        for addr in addrs:
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(
                        addr, t.port, limit=HEAD_LIMIT, ssl=ctx,
                        server_hostname=t.host if tls else None,
                    ),
                    max(0.1, deadline - time.monotonic()),
                )  # fmt: skip
            except TimeoutError as exc:
                raise UpstreamError("timeout", f"connect to {t.host} ({addr}) timed out") from exc
            except ssl.SSLError as exc:
                raise UpstreamError("tls", f"{t.host} ({addr}): {exc.reason or exc}") from exc
            except OSError as exc:
                errors.append(f"{addr}: {exc.strerror or exc}")
                continue
            return Upstream(reader, writer, addr, http.ResponseReader(reader, self.idle_timeout))
        raise UpstreamError("connect", f"cannot connect to {t.host}:{t.port}: {'; '.join(errors)}")

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


def _navigation(req: http.Request) -> bool:
    """Does the browser say req is a top-level navigation?"""
    return req.field(b"sec-fetch-dest") == b"document"


def _document_key(url: str) -> str:
    """url as the proxy compares document URLs: scheme, host and port as `origin_key`
    spells them, path and query, no fragment (the browser's request line never has one).
    A URL the browser spells otherwise (percent-encoding, IDN) is matched by the browser's
    events instead."""
    parts = urlsplit(url)
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme.lower()}://{origin_key(url)}{parts.path or '/'}{query}"


def _open_still(up: Upstream) -> bool:
    """Has the server not closed this unused connection?"""
    return not up.writer.is_closing() and not up.reader.at_eof()


def _retrieved(task: asyncio.Task[Any]) -> None:
    """Done callback: a warm task's failure is read here, so asyncio never logs it as an
    exception nobody retrieved (the browser's own request reports the failure)."""
    if not task.cancelled():
        task.exception()


async def _cancelled(task: asyncio.Future[Any]) -> None:
    """Cancel a helper task and wait for it to end, whatever it ended with."""
    if not task.done():
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
