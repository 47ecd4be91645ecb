"""Slow is not dead: the egress proxy marks a host unresponsive only when it accepted nothing
or sent nothing at all within the subresource bound, never when one of its answers was slow,
and no mark ever refuses the page's own document or its redirects. The rule itself
(EgressPolicy.bound_passed, pure), then the proxy against real servers on 127.0.0.x."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from services.archiver.egress import EgressPolicy, EgressProxy
from tests.archiver.test_egress_warm import proxied_get

BOUND = 0.5


class Clock:
    """The policy's clock (time.monotonic), moved by hand."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = 1000.0
        monkeypatch.setattr(time, "monotonic", lambda: self.now)


def test_a_host_that_answers_slowly_is_not_marked(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock(monkeypatch)
    policy = EgressPolicy(answering_s=300)
    policy.answered("Slow.Example", 80)  # its page's document, say
    clock.now += 10
    # connected, not a byte of this answer yet: slow, since it answered lately
    assert policy.bound_passed("slow.example", 80, connected=True, heard=False) is False
    assert not policy.unresponsive("slow.example", 80)
    clock.now += 300  # nothing from it for answering_s: it sends nothing at all
    assert policy.bound_passed("slow.example", 80, connected=True, heard=False) is True
    assert policy.unresponsive("slow.example", 80)


def test_a_host_that_sent_part_of_its_answer_is_not_marked() -> None:
    policy = EgressPolicy()
    assert policy.bound_passed("drip.example", 443, connected=True, heard=True) is False
    assert not policy.unresponsive("drip.example", 443)


def test_a_host_that_accepted_nothing_or_sent_nothing_is_marked() -> None:
    policy = EgressPolicy()
    # no TCP accept, no TLS handshake within the bound: marked, even if it answered lately
    policy.answered("gone.example", 443)
    assert policy.bound_passed("gone.example", 443, connected=False, heard=False) is True
    assert policy.unresponsive("gone.example", 443)
    # accepted, and never sent one byte (nor any answer before)
    assert policy.bound_passed("mute.example", 80, connected=True, heard=False) is True
    assert policy.unresponsive("mute.example", 80)
    assert not policy.unresponsive("mute.example", 443)  # host:port, not the host


Answer = Callable[[bytes], AsyncIterator[bytes]]
"""A scripted server's answer to one request head: the pieces it writes, as it pleases."""


@asynccontextmanager
async def scripted(host: str, answer: Answer) -> AsyncIterator[str]:
    """A server on host:free port answering each request with `answer`; its base URL."""
    held: list[asyncio.StreamWriter] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while head := await reader.readuntil(b"\r\n\r\n"):
                async for piece in answer(head):
                    writer.write(piece)
                    await writer.drain()

    server = await asyncio.start_server(serve, host, 0)
    try:
        yield f"http://{host}:{server.sockets[0].getsockname()[1]}"
    finally:
        server.close()
        for w in held:
            w.transport.abort()


def ok(body: bytes, extra: str = "") -> bytes:
    return f"HTTP/1.1 200 OK\r\n{extra}Content-Length: {len(body)}\r\n\r\n".encode() + body


async def slow_but_whole(head: bytes) -> AsyncIterator[bytes]:
    """/doc at once; anything else after 3 bounds, a response at a time."""
    if not head.startswith(b"GET /doc "):
        await asyncio.sleep(3 * BOUND)
    yield ok(b"<html><body>a slow page</body></html>", "Content-Type: text/html\r\n")


async def a_head_begun(head: bytes) -> AsyncIterator[bytes]:
    """The status line at once, the rest of the head never."""
    yield b"HTTP/1.1 200 OK\r\n"
    await asyncio.sleep(3600)


@asynccontextmanager
async def proxy(policy: EgressPolicy) -> AsyncIterator[tuple[EgressProxy, str]]:
    p = EgressProxy(policy, 1 << 20, idle_timeout=10)
    url = await p.start()
    try:
        yield p, url
    finally:
        await p.close()


async def mute(head: bytes) -> AsyncIterator[bytes]:
    """Accepts, reads, never says a word."""
    await asyncio.sleep(3600)
    yield b""


def port_of(base: str) -> int:
    return int(base.rsplit(":", 1)[1])


async def test_a_slow_answer_is_cut_and_its_host_not_marked_a_mute_one_is() -> None:
    policy = EgressPolicy(allow_private=True, subresource_timeout=BOUND)
    async with (
        scripted("127.0.0.12", slow_but_whole) as site,
        scripted("127.0.0.15", mute) as ads,
        proxy(policy) as (_p, url),
    ):
        assert (await proxied_get(url, f"{site}/doc")).startswith(b"HTTP/1.1 200")
        for get in (f"{site}/favicon.ico", f"{ads}/ad.js"):
            cut = await proxied_get(url, get)
            assert cut.startswith(b"HTTP/1.1 504") and b"no answer within 0.5 s" in cut
        assert not policy.unresponsive("127.0.0.12", port_of(site))
        assert policy.unresponsive("127.0.0.15", port_of(ads))
        # the slow host's next subresource is tried (and cut at the bound) again; the mute
        # host's is answered at once
        again = await proxied_get(url, f"{site}/style.css")
        assert b"no answer within" in again and b"left a request unanswered" not in again
        assert b"left a request unanswered" in await proxied_get(url, f"{ads}/ad2.js")


async def test_a_host_that_began_its_answer_is_not_marked() -> None:
    policy = EgressPolicy(allow_private=True, subresource_timeout=BOUND)
    async with scripted("127.0.0.13", a_head_begun) as site, proxy(policy) as (_p, url):
        assert (await proxied_get(url, f"{site}/a.png")).startswith(b"HTTP/1.1 504")
        assert not policy.unresponsive("127.0.0.13", port_of(site))


async def test_no_mark_refuses_the_document_or_its_redirect() -> None:
    """The page session names the URL it navigates to before the browser asks: a marked
    host still gets that request, and the redirect the proxy relays for it."""

    async def moved(head: bytes) -> AsyncIterator[bytes]:
        if head.startswith(b"GET /old "):
            yield b"HTTP/1.1 301 Moved\r\nLocation: /new?x=1#top\r\nContent-Length: 0\r\n\r\n"
        else:
            yield ok(b"<html><body>the page</body></html>", "Content-Type: text/html\r\n")

    policy = EgressPolicy(allow_private=True, subresource_timeout=BOUND)
    async with scripted("127.0.0.14", moved) as site, proxy(policy) as (p, url):
        port = port_of(site)
        policy.mark_unresponsive("127.0.0.14", port)
        refused = await proxied_get(url, f"{site}/img.png")
        assert refused.startswith(b"HTTP/1.1 504") and b"left a request unanswered" in refused
        p.expect_document(f"{site}/old#frag")
        assert (await proxied_get(url, f"{site}/old")).startswith(b"HTTP/1.1 301")
        policy.mark_unresponsive("127.0.0.14", port)  # its answer forgot the mark
        assert (await proxied_get(url, f"{site}/new?x=1")).startswith(b"HTTP/1.1 200")
