"""A fixture HTTP server on 127.0.0.x with programmable routes, for tests and benchmarks."""

from __future__ import annotations

import socketserver
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """A canned response."""

    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/html"})


Route = Reply | Callable[[BaseHTTPRequestHandler], Reply]

SHUTDOWN_POLL_S = 0.02
"""How often a fixture server's loop looks for `shutdown()`. socketserver's default, 0.5 s,
made each test wait ~0.25 s per server it stopped (hundreds of servers in `make test`)."""


def serving_thread(server: socketserver.BaseServer) -> threading.Thread:
    """The daemon thread that runs `server` (start it; `server.shutdown()` ends it at once)."""
    return threading.Thread(target=server.serve_forever, args=(SHUTDOWN_POLL_S,), daemon=True)


class FixtureServer:
    """Serves `routes` (path -> Reply or callable) on host:free port in a thread; over HTTPS
    with `tls` (a server context holding its certificate)."""

    def __init__(self, host: str = "127.0.0.1", tls: ssl.SSLContext | None = None) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append((self.path, dict(self.headers)))
                route = server.routes.get(self.path) or server.routes.get(self.path.split("?")[0])
                reply = route(self) if callable(route) else route
                if reply is None:
                    reply = Reply(b"not found", 404, {"Content-Type": "text/plain"})
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                if "content-length" not in {k.lower() for k in reply.headers}:
                    # a route may declare its own, e.g. longer than its body: the connection
                    # then ends before the body does
                    self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.scheme = "https" if tls is not None else "http"
        self.host = host
        self.port = int(self.httpd.server_address[1])
        self.thread = serving_thread(self.httpd)

    @property
    def base(self) -> str:
        """http(s)://host:port"""
        return f"{self.scheme}://{self.host}:{self.port}"

    def __enter__(self) -> FixtureServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


Serve = Callable[..., FixtureServer]
"""The `serve` fixture (tests/conftest.py): serve(routes, host="127.0.0.1") -> a started
FixtureServer, stopped when the test ends."""
