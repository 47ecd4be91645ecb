"""Hostile fixture pages on 127.0.0.x: what the archiver's browser must survive."""

from __future__ import annotations

import contextlib
import functools
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from testkit.httpserver import serving_thread

MB = 1024 * 1024
NODES = 1_000_000
HELD_S = 120.0


@functools.cache
def _gzip_bomb(size: int) -> bytes:
    """A gzip body that inflates to `size` bytes of HTML-ish filler (made when first asked
    for, once a process: ~1.3 s of CPU, and most sites never serve it)."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b"<p>" + b"a" * (MB - 3)
    out = [comp.compress(chunk) for _ in range(size // MB)]
    return b"".join(out) + comp.flush()


PAGES: dict[str, bytes] = {
    "/ok": b"<html><head><title>fine</title></head><body><h1>all fine</h1></body></html>",
    "/loop": b"<html><body><h1>spinning</h1><script>while (true) {}</script></body></html>",
    "/dialogs": (
        b"<html><body><script>alert('a'); prompt('b'); confirm('c');"
        b"window.onbeforeunload = () => 'stay';</script><h1>after dialogs</h1></body></html>"
    ),
    "/popups": (
        b"<html><body><h1>popups</h1><script>window.open('/ok'); window.open('about:blank');"
        b"</script></body></html>"
    ),
    "/tabs": (
        b"<html><body><h1>tabs</h1><script>"
        b"const n = +(new URLSearchParams(location.search).get('n') || 50);"
        b"for (let i = 0; i < n; i++) window.open('/ok?' + i);</script></body></html>"
    ),
    "/download-link": (
        b"<html><body><h1>download</h1><a id=d href='/file.bin' download>get</a>"
        b"<script>document.getElementById('d').click()</script></body></html>"
    ),
    "/million": (
        b"<html><body><h1>many nodes</h1><div id=box style='height:300px;overflow:hidden'></div>"
        b"<script>const f = document.createDocumentFragment();"
        b"const n = +(new URLSearchParams(location.search).get('n') || %d);"
        b"for (let i = 0; i < n; i++) f.appendChild(document.createElement('b'));"
        b"document.getElementById('box').appendChild(f);</script></body></html>" % NODES
    ),
}


class HostileSite:
    """Serves PAGES plus the streaming horrors on host:free port, in a thread.

    `other` is the base URL of a second host (e.g. a 127.0.0.1 "internal" server) used by
    /to-other (a redirect there) and /img-other (an image from there)."""

    def __init__(self, host: str = "127.0.0.1", other: str = "") -> None:
        self.requests: list[str] = []
        self.other = other
        self.release = threading.Event()
        """Lets /held answer (it waits for it, at most HELD_S)."""
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                site.requests.append(self.path)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    site.answer(self)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        self.base = f"http://{host}:{self.httpd.server_address[1]}"
        self.thread = serving_thread(self.httpd)

    def __enter__(self) -> HostileSite:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @staticmethod
    def _head(h: BaseHTTPRequestHandler, status: int, headers: dict[str, str]) -> None:
        h.send_response(status)
        for k, v in headers.items():
            h.send_header(k, v)
        h.end_headers()

    def answer(self, h: BaseHTTPRequestHandler) -> None:
        path = h.path.split("?")[0]
        if path in PAGES:
            body = PAGES[path]
            self._head(h, 200, {"Content-Type": "text/html", "Content-Length": str(len(body))})
            h.wfile.write(body)
        elif path.startswith("/redirect/"):
            n = int(path.rsplit("/", 1)[1])
            self._head(h, 302, {"Location": f"/redirect/{n + 1}", "Content-Length": "0"})
        elif path == "/to-other":
            self._head(h, 302, {"Location": f"{self.other}/secret", "Content-Length": "0"})
        elif path == "/img-other":
            page = f"<html><body><h1>img</h1><img src='{self.other}/secret.png'></body></html>"
            self._head(h, 200, {"Content-Type": "text/html", "Content-Length": str(len(page))})
            h.wfile.write(page.encode())
        elif path == "/drip":
            self._head(h, 200, {"Content-Type": "text/html", "Content-Length": "100000"})
            for _ in range(100_000):
                h.wfile.write(b"<")
                h.wfile.flush()
                time.sleep(1)
        elif path == "/huge":
            size = 100 * MB
            self._head(h, 200, {"Content-Type": "text/html", "Content-Length": str(size)})
            chunk = b"<p>" + b"x" * (64 * 1024 - 3)
            for _ in range(size // len(chunk)):
                h.wfile.write(chunk)
        elif path == "/endless-markup":
            # a document that never ends, each 8 bytes a new element: the parser builds DOM
            # (and the renderer's memory) for as long as the connection lasts
            self._head(h, 200, {"Content-Type": "text/html", "Connection": "close"})
            h.wfile.write(b"<!doctype html><title>endless</title><body>")
            chunk = b"<p>x</p>" * 8192
            while True:
                h.wfile.write(chunk)
        elif path == "/held":
            self.release.wait(HELD_S)
            body = PAGES["/ok"]
            self._head(h, 200, {"Content-Type": "text/html", "Content-Length": str(len(body))})
            h.wfile.write(body)
        elif path == "/bomb":
            body = _gzip_bomb(200 * MB)
            self._head(h, 200, {"Content-Type": "text/html", "Content-Encoding": "gzip",
                                "Content-Length": str(len(body))})  # fmt: skip
            h.wfile.write(body)
        elif path == "/file.bin":
            body = b"\0" * 1024
            self._head(h, 200, {"Content-Type": "application/octet-stream",
                                "Content-Disposition": "attachment; filename=file.bin",
                                "Content-Length": str(len(body))})  # fmt: skip
            h.wfile.write(body)
        else:
            self._head(h, 404, {"Content-Length": "0"})
