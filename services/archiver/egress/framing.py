"""HTTP/1.1 framing for the egress proxy: reading the browser's requests and the servers'
responses, writing them on, and what one exchange was (for the browser WARC).

Parsing is httptools (llhttp, Node's C parser; already uvicorn's), not hand-written and not
h11: the proxy parses every request and response of every page twice over (the browser's
side and the server's), and h11's pure-Python state machine costs ~0.2 ms a message here
where llhttp costs microseconds (docs/architecture.md, "Egress"). What llhttp leaves to its
caller is done here: a response to HEAD has no body whatever its Content-Length says; the
heads we send are written from the parsed fields, hop-by-hop fields dropped.

Bodies are relayed de-chunked and re-framed: a response with a Content-Length keeps it, a
chunked one is chunked again towards the browser, one delimited by the connection's end
ends the browser's connection too.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httptools

CHUNK = 64 * 1024
HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"proxy-connection", b"proxy-authorization",
     b"proxy-authenticate", b"te", b"trailer", b"transfer-encoding", b"upgrade"}
)  # fmt: skip
"""Fields that describe one connection, not the message: never passed on (RFC 9110 7.6.1)."""
NO_BODY_STATUS = (204, 304)

Headers = list[tuple[bytes, bytes]]


class BadMessage(Exception):
    """A message the parser refused, or one that ended before it was whole."""


@dataclass
class Request:
    """One request as the browser sent it."""

    method: str
    target: str
    """As written on the request line (absolute-form through a plain proxy connection)."""
    version: str
    headers: Headers
    body: bytes = b""
    keep_alive: bool = True
    upgrade: bool = False
    rest: bytes = b""
    """Bytes that followed the head of an upgrade request (already read)."""

    def field(self, name: bytes) -> bytes | None:
        return _field(self.headers, name)


@dataclass
class Response:
    """One response head as the server sent it."""

    status: int
    reason: str
    version: str
    headers: Headers
    keep_alive: bool = True
    chunked: bool = False
    length: int | None = None

    def field(self, name: bytes) -> bytes | None:
        return _field(self.headers, name)


def _field(headers: Headers, name: bytes) -> bytes | None:
    for k, v in headers:
        if k.lower() == name:
            return v
    return None


class _Parsed:
    """httptools' callbacks as a queue of events, in order: ("head", fields), ("body",
    bytes), ("end", None) per message. The parser calls them inside feed_data, where one
    chunk of input can finish one message and begin the next (a 1xx, then the response)."""

    def __init__(self) -> None:
        self.parser: httptools.HttpRequestParser | httptools.HttpResponseParser | None = None
        self.events: list[tuple[str, object]] = []
        self._url = self._reason = b""
        self._headers: Headers = []

    def on_message_begin(self) -> None:
        self._url, self._reason, self._headers = b"", b"", []

    def on_url(self, url: bytes) -> None:
        self._url += url

    def on_status(self, status: bytes) -> None:
        self._reason += status

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        p = self.parser
        assert p is not None
        fields: dict[str, object] = {
            "url": self._url, "reason": self._reason, "headers": self._headers,
            "version": p.get_http_version(), "keep_alive": p.should_keep_alive(),
            "upgrade": p.should_upgrade(),
        }  # fmt: skip
        if isinstance(p, httptools.HttpRequestParser):
            fields["method"] = p.get_method()
        else:
            fields["status"] = p.get_status_code()
        self.events.append(("head", fields))

    def on_body(self, body: bytes) -> None:
        self.events.append(("body", body))

    def on_message_complete(self) -> None:
        self.events.append(("end", None))


class _Stream:
    """One connection's messages, parsed as they arrive."""

    def __init__(self, reader: asyncio.StreamReader, timeout: float, *, requests: bool) -> None:
        self.reader, self.timeout = reader, timeout
        self.parsed = _Parsed()
        self.parser = (httptools.HttpRequestParser if requests else httptools.HttpResponseParser)(
            self.parsed
        )
        self.parsed.parser = self.parser
        self.rest = b""
        """What followed an upgrade request's head (the new protocol's first bytes)."""
        self.upgraded = False
        self.received = 0
        """Bytes read from the connection so far."""

    async def next_event(self, *, eof_ok: bool = False) -> tuple[str, object] | None:
        """The next event; None at the connection's end (BadMessage unless `eof_ok`)."""
        while not self.parsed.events:
            if self.upgraded:
                return None
            data = await asyncio.wait_for(self.reader.read(CHUNK), self.timeout)
            self.received += len(data)
            if not data:
                if eof_ok:
                    return None
                raise BadMessage("the connection ended mid-message")
            try:
                self.parser.feed_data(data)
            except httptools.HttpParserUpgrade as exc:
                self.rest, self.upgraded = data[int(exc.args[0]) :], True
            except httptools.HttpParserError as exc:
                raise BadMessage(f"bad message: {exc}") from exc
        return self.parsed.events.pop(0)


class RequestReader:
    """The browser's requests on one connection."""

    def __init__(self, reader: asyncio.StreamReader, timeout: float, max_body: int) -> None:
        self.reader = reader
        self._stream = _Stream(reader, timeout, requests=True)
        self.max_body = max_body

    @property
    def rest(self) -> bytes:
        return self._stream.rest

    async def next(self) -> Request | None:
        """The next whole request (None when the browser closed the connection between
        requests); an upgrade request ends at its head."""
        event = await self._stream.next_event(eof_ok=True)
        if event is None:
            return None
        kind, value = event
        if kind != "head":
            raise BadMessage(f"unexpected {kind} before a request head")
        assert isinstance(value, dict)
        req = Request(
            method=value["method"].decode("latin-1"),
            target=value["url"].decode("latin-1"),
            version=value["version"],
            headers=value["headers"],
            keep_alive=value["keep_alive"],
            upgrade=value["upgrade"],
        )
        if req.upgrade:
            return req
        body: list[bytes] = []
        size = 0
        while True:
            kind, piece = await self._stream.next_event() or ("end", None)
            if kind == "end":
                break
            assert isinstance(piece, bytes)
            size += len(piece)
            if size > self.max_body:
                raise BadMessage(f"request body over {self.max_body} bytes")
            body.append(piece)
        req.body = b"".join(body)
        return req


class ResponseReader:
    """A server connection's responses, one after the other."""

    def __init__(self, reader: asyncio.StreamReader, timeout: float) -> None:
        self._stream = _Stream(reader, timeout, requests=False)
        self.ended = True
        """The last response was read whole (the connection may carry another)."""
        self._framed = True
        self.reusable = True
        """False once the parser cannot follow the connection on (after a HEAD response,
        whose Content-Length llhttp would wait for)."""

    @property
    def received(self) -> int:
        """Bytes the server sent on this connection so far (the egress proxy tells a slow
        answer from none at all by them)."""
        return self._stream.received

    async def head(self, method: str) -> Response:
        """The next response head (a 1xx head too: the caller asks again after it)."""
        event = await self._stream.next_event()
        assert event is not None
        kind, value = event
        if kind != "head" or not isinstance(value, dict):
            raise BadMessage(f"unexpected {kind} before a response head")
        headers: Headers = value["headers"]
        te = (_field(headers, b"transfer-encoding") or b"").lower()
        length = _field(headers, b"content-length")
        resp = Response(
            status=value["status"],
            reason=value["reason"].decode("latin-1"),
            version=value["version"],
            headers=headers,
            keep_alive=value["keep_alive"],
            chunked=b"chunked" in te,
            length=int(length) if length is not None and length.strip().isdigit() else None,
        )
        self.ended, self._framed = False, resp.chunked or resp.length is not None
        if method == "HEAD":
            self.ended, self.reusable = True, False
        elif resp.status < 200 or resp.status in NO_BODY_STATUS:
            await self._expect_end()
        return resp

    async def _expect_end(self) -> None:
        event = await self._stream.next_event()
        if event is not None and event[0] != "end":
            raise BadMessage(f"a body where none may be ({event[0]})")
        self.ended = True

    async def body(self) -> bytes | None:
        """The next piece of the body (de-chunked); None once it ended. Raises BadMessage
        when the connection ends before the body does."""
        if self.ended:
            return None
        event = await self._stream.next_event(eof_ok=True)
        if event is None:
            if self._framed:
                raise BadMessage("the server closed the connection mid-body")
            self.ended, self.reusable = True, False  # delimited by the connection's end
            return None
        kind, value = event
        if kind == "end":
            self.ended = True
            return None
        assert isinstance(value, bytes)
        return value


def request_head(req: Request, target: str, *, close: bool) -> bytes:
    """The request head to send the server: origin-form target, hop-by-hop fields dropped,
    the body (read whole) framed by its length."""
    lines = [f"{req.method} {target} HTTP/1.1".encode("latin-1")]
    lines += [k + b": " + v for k, v in req.headers if k.lower() not in HOP_BY_HOP]
    if req.body and req.field(b"content-length") is None:
        lines.append(b"Content-Length: " + str(len(req.body)).encode())
    if req.upgrade:
        lines += [b"Connection: Upgrade", b"Upgrade: " + (req.field(b"upgrade") or b"")]
    elif close:
        lines.append(b"Connection: close")
    return b"\r\n".join(lines) + b"\r\n\r\n"


def response_head(resp: Response, *, close: bool, chunked: bool) -> bytes:
    """The response head for the browser: hop-by-hop fields dropped, framed as given."""
    lines = [f"HTTP/1.1 {resp.status} {resp.reason}".rstrip().encode("latin-1")]
    lines += [k + b": " + v for k, v in resp.headers if k.lower() not in HOP_BY_HOP]
    if chunked:
        lines.append(b"Transfer-Encoding: chunked")
    if close:
        lines.append(b"Connection: close")
    return b"\r\n".join(lines) + b"\r\n\r\n"


def framing(resp: Response, method: str) -> tuple[bool, bool]:
    """(chunked, close): how the browser gets the body: chunked again when the server
    chunked it; by the connection's end when the server framed it so."""
    if method == "HEAD" or resp.status < 200 or resp.status in NO_BODY_STATUS:
        return False, not resp.keep_alive
    if resp.chunked:
        return True, not resp.keep_alive
    if resp.length is not None:
        return False, not resp.keep_alive
    return False, True


def chunk(data: bytes) -> bytes:
    """One chunk of a chunked body."""
    return b"%x\r\n%s\r\n" % (len(data), data)


LAST_CHUNK = b"0\r\n\r\n"
