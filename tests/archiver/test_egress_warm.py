"""Warming: the origins a page's document names, read as the document passes the egress
proxy (services/archiver/egress/warm.py), and the proxy connecting to them before the browser
asks (services/archiver/egress/proxy.py): against real servers on 127.0.0.x, one that answers
and one that accepts and never answers."""

from __future__ import annotations

import asyncio
import gzip
import json
import time
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from services.archiver.egress import EgressPolicy, EgressProxy
from services.archiver.egress import framing as http
from services.archiver.egress.warm import SCAN_BYTES, DocumentTap, subresource_origins
from testkit.browser import BrowserHarness, run_hooks
from testkit.httpserver import FixtureServer, Reply

PAGE = b"""<html><head><base href="https://cdn.example/assets/">
<link rel="stylesheet" href="//css.example/a.css"><link rel="canonical" href="https://canon.example/">
<link rel="shortcut icon" href="https://icon.example/f.ico">
<script src="https://js.example:8443/a.js"></script>
<script>var t = document.createElement('script'); t.src = location.protocol + '//tag.example/t.js';
var cfg = {"img": "https:\\/\\/json.example\\/a.png"}; var q = a.b//not-a-host.example/
</script><script type="application/ld+json">{"image": "https://ld.example/i.png"}</script>
</head><body><a href="https://link.example/">a link</a><img src="/x.png">
<img loading="lazy" src="https://lazy.example/i.png">
<img srcset="https://s1.example/a.png 1x, https://s2.example/b.png 2x">
<video poster="http://poster.example/p.jpg"></video><iframe src="javascript:void(0)"></iframe>
<img src="https://page.example/own.png"></body></html>"""


def test_the_origins_a_document_loads_from_and_only_those() -> None:
    found = subresource_origins(PAGE, "https://page.example/story", 50)
    assert found == [
        ("https", "css.example", 443),  # protocol-relative, the base's scheme
        ("https", "icon.example", 443),
        ("https", "js.example", 8443),
        ("https", "cdn.example", 443),  # a relative image, against <base href>
        ("https", "s1.example", 443),
        ("https", "s2.example", 443),
        ("http", "poster.example", 80),
        ("https", "tag.example", 443),  # spelled in an inline script, the page's scheme
        ("https", "json.example", 443),  # escaped slashes, as in JSON
    ]  # never: links, canonical, lazy images, JSON-LD, the page's own origin, `a.b//x`
    assert subresource_origins(PAGE, "https://page.example/story", 2) == found[:2]
    assert subresource_origins(b"", "https://page.example/", 5) == []
    assert subresource_origins(b"\x00\xff<img src=http://[bad/x>", "https://p.example/", 5) == []


def test_the_tap_reads_identity_and_gzip_only_and_is_bounded() -> None:
    for coding, data in [(b"", PAGE), (b"gzip", gzip.compress(PAGE)),
                         (b"deflate", zlib.compress(PAGE))]:  # fmt: skip
        tap = DocumentTap(coding)
        for i in range(0, len(data), 7):
            tap.feed(data[i : i + 7])
        assert tap.body == PAGE, coding
    for coding, data in [(b"br", PAGE), (b"gzip", PAGE)]:  # not readable / not what it says
        tap = DocumentTap(coding)
        tap.feed(data)
        assert tap.body == b"", coding
    big = DocumentTap(b"gzip")
    big.feed(gzip.compress(b"a" * (SCAN_BYTES * 8)))  # a bomb inflates no further than this
    assert len(big.body) == SCAN_BYTES


class Origin:
    """A TCP server on 127.0.0.x counting its connections: `answer` answers each request
    with a small 200, else it never says a word."""

    def __init__(self, host: str, *, answer: bool) -> None:
        self.host, self.answer = host, answer
        self.connections = 0
        self.accepted: list[float] = []
        """When each connection came (wall clock, as the proxy log's `at`)."""
        self.port = 0
        self._held: list[asyncio.StreamWriter] = []

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.accepted.append(time.time())
        self._held.append(writer)
        if not self.answer:
            return
        while await reader.readuntil(b"\r\n\r\n"):
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 2\r\n\r\nok"
            )
            await writer.drain()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Origin]:
        server = await asyncio.start_server(self._serve, self.host, 0)
        self.port = server.sockets[0].getsockname()[1]
        try:
            yield self
        finally:
            server.close()
            for w in self._held:
                w.transport.abort()


async def proxied_get(proxy_url: str, url: str) -> bytes:
    """One GET through the proxy (plain HTTP, absolute form); the whole answer."""
    host, port = proxy_url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"GET {url} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    try:
        return await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()


@asynccontextmanager
async def proxy_with_document(
    page: bytes, warm_origins: int = 16, policy: EgressPolicy | None = None
) -> AsyncIterator[tuple[EgressProxy, str]]:
    """An egress proxy whose page's main document is `page`, served on 127.0.0.1."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body) + body)  # fmt: skip
        await writer.drain()
        writer.close()

    body = gzip.compress(page, mtime=0)
    site = await asyncio.start_server(serve, "127.0.0.1", 0)
    doc = f"http://127.0.0.1:{site.sockets[0].getsockname()[1]}/story"
    policy = policy or EgressPolicy(
        allow_private=True, subresource_timeout=1.0, warm_origins=warm_origins
    )
    proxy = EgressProxy(policy, 1 << 20, idle_timeout=5)
    proxy.is_document = lambda url, tunnel: url == doc
    url = await proxy.start()
    try:
        answer = await proxied_get(url, doc)
        assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(body)
        yield proxy, url
    finally:
        await proxy.close()
        site.close()


async def test_a_warmed_connection_is_the_one_the_browser_gets() -> None:
    async with Origin("127.0.0.8", answer=True).running() as img:
        page = b'<html><body><img src="http://127.0.0.8:%d/a.png"></body></html>' % img.port
        async with proxy_with_document(page) as (proxy, url):
            assert proxy.log.warmed == 1
            answer = await proxied_get(url, f"http://127.0.0.8:{img.port}/a.png")
            assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"ok")
            assert img.connections == 1  # warming cost no extra connection
            answer = await proxied_get(url, f"http://127.0.0.8:{img.port}/b.png")
            assert answer.endswith(b"ok") and img.connections == 2  # used once, then afresh


async def test_a_host_that_never_answers_is_known_before_the_browser_asks() -> None:
    async with Origin("127.0.0.9", answer=False).running() as dead:
        page = b'<html><body><img src="https://127.0.0.9:%d/a.png"></body></html>' % dead.port
        async with proxy_with_document(page) as (proxy, _url):
            policy = proxy.policy
            for _ in range(100):  # its TLS handshake never ends: the bound (1 s) passes
                if policy.unresponsive("127.0.0.9", dead.port):
                    break
                await asyncio.sleep(0.05)
            assert policy.unresponsive("127.0.0.9", dead.port)
            assert dead.connections == 1 and proxy.log.failed == []  # the page's log: its own


async def test_warming_never_reaches_a_refused_address() -> None:
    """In production the proxy refuses private addresses: a document naming one gets it no
    connection, warmed or not (here only 127.0.0.8 counts as private, so the document on
    127.0.0.1 can be served)."""
    policy = EgressPolicy(allow_private=False, refuse=lambda ip: str(ip) == "127.0.0.8")
    async with Origin("127.0.0.8", answer=True).running() as inner:
        page = b'<html><body><img src="http://127.0.0.8:%d/a.png"></body></html>' % inner.port
        async with proxy_with_document(page, policy=policy) as (proxy, _url):
            await asyncio.sleep(0.3)
            assert proxy.log.warmed == 1 and inner.connections == 0
            assert proxy.log.refused == []  # the page asked for nothing yet


async def test_no_warming_when_it_is_off() -> None:
    async with Origin("127.0.0.8", answer=True).running() as img:
        page = b'<html><body><img src="http://127.0.0.8:%d/a.png"></body></html>' % img.port
        async with proxy_with_document(page, warm_origins=0) as (proxy, _url):
            await asyncio.sleep(0.2)
            assert proxy.log.warmed == 0 and img.connections == 0


@pytest.mark.parametrize(
    ("kind", "dest", "read"),
    [("text/html; charset=utf-8", None, True), ("text/html", b"document", True),
     ("application/xhtml+xml", None, True), ("text/html", b"iframe", False),
     ("text/html", b"empty", False), ("text/plain", None, False),
     ("application/pdf", b"document", False)],
)  # fmt: skip
def test_only_what_may_be_an_html_document_is_read(
    kind: str, dest: bytes | None, read: bool
) -> None:
    proxy = EgressProxy(EgressPolicy(), 1 << 20, idle_timeout=5)
    headers = [(b"Sec-Fetch-Dest", dest)] if dest else []
    req = http.Request("GET", "http://a.example/", "1.1", headers)
    resp = http.Response(200, "OK", "1.1", [(b"Content-Type", kind.encode())])
    assert (proxy._document_tap(req, resp) is not None) == read


@pytest.mark.integration
@pytest.mark.parametrize("warm", [16, 0])
async def test_a_tags_host_is_known_dead_when_the_head_script_has_failed(
    browser: BrowserHarness, tmp_path: Path, warm: int
) -> None:
    """A page's inline script (an analytics tag) asks for its pixel only once the head's
    blocking script has loaded or failed. Both hosts accept and never answer. Warmed, the
    pixel's host was contacted with the document, so its bound passed with the script's and
    the pixel is answered at once (one connection in all); not warmed, it is contacted only
    after the script failed, and would cost the page the bound a second time."""
    async with (
        Origin("127.0.0.8", answer=False).running() as head,
        Origin("127.0.0.9", answer=False).running() as tag,
    ):
        page = f"""<html><head><title>t</title>
<script src="https://127.0.0.8:{head.port}/a.js"></script></head><body><p>the article</p>
<script>new Image().src = "https://127.0.0.9:{tag.port}/pixel.png";</script></body></html>"""
        policy = EgressPolicy(allow_private=True, subresource_timeout=1.0, warm_origins=warm)
        with FixtureServer() as site:
            site.routes["/story"] = Reply(page.encode())
            seen = await run_hooks(
                browser, f"{site.base}/story", tmp_path, ["navigate"], page={"policy": policy},
                NAVIGATE_TIMEOUT="20", NAVIGATE_SETTLE_MS="200",
            )  # fmt: skip
    result = seen.final["navigate"]
    assert (result.status, result.error_code) == ("succeeded", None), result.output_str
    nav = json.loads((tmp_path / "navigate" / "navigate.json").read_text())
    failed = {e["origin"].split(":")[0]: e["at"] for e in nav["failed"]}
    assert failed.keys() == {"127.0.0.8", "127.0.0.9"}, nav["failed"]
    if warm:
        assert tag.accepted[0] < failed["127.0.0.8"]
        assert tag.connections == 1
    else:
        assert tag.accepted[0] > failed["127.0.0.8"]
