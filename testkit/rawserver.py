"""A raw TCP fixture server on 127.0.0.x whose routes misbehave on purpose: drip bytes,
stop short, never finish their headers, never answer, stream huge or hostile bodies.

Each route is a function given the connected socket (the request already read) and a stop
event; it writes whatever it likes. Handler threads are daemons and every loop checks the
stop event, so `__exit__` ends them.
"""

from __future__ import annotations

import socket
import socketserver
import threading
import time
from collections.abc import Callable

from testkit.httpserver import serving_thread

Behaviour = Callable[[socket.socket, threading.Event], None]


def head(status: str = "200 OK", **headers: str | int) -> bytes:
    """A status line and headers (underscores in names become dashes), blank line included."""
    lines = [f"HTTP/1.1 {status}"] + [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def wait(stop: threading.Event, seconds: float) -> bool:
    """Sleep unless stopped; False once stopped."""
    return not stop.wait(seconds)


def drip(interval: float = 1.0, length: int = 100_000) -> Behaviour:
    """Headers at once, then one body byte every `interval` seconds."""

    def run(sock: socket.socket, stop: threading.Event) -> None:
        sock.sendall(head(Content_Type="text/html", Content_Length=length) + b"<")
        while wait(stop, interval):
            sock.sendall(b"p")

    return run


def short_body(sent: int = 1000, declared: int = 100_000) -> Behaviour:
    """Declares `declared` bytes, sends `sent`, closes."""

    def run(sock: socket.socket, stop: threading.Event) -> None:
        sock.sendall(head(Content_Type="text/html", Content_Length=declared) + b"x" * sent)

    return run


def endless_headers(interval: float = 0.5) -> Behaviour:
    """A status line, then a header byte every `interval` seconds: headers never end."""

    def run(sock: socket.socket, stop: threading.Event) -> None:
        sock.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
        while wait(stop, interval):
            sock.sendall(b"a")

    return run


def silent(sock: socket.socket, stop: threading.Event) -> None:
    """Accepts, reads the request, never answers."""
    while wait(stop, 0.2):
        pass


def stream(headers: bytes, chunk: bytes, total: int) -> Behaviour:
    """Send `headers`, then `chunk` repeated until `total` body bytes (or the client leaves)."""

    def run(sock: socket.socket, stop: threading.Event) -> None:
        sock.sendall(headers)
        sent = 0
        while sent < total and not stop.is_set():
            piece = chunk[: total - sent]
            sock.sendall(piece)
            sent += len(piece)

    return run


def reply(data: bytes) -> Behaviour:
    """Send `data` (a whole response) and close."""

    def run(sock: socket.socket, stop: threading.Event) -> None:
        sock.sendall(data)

    return run


class RawServer:
    """Serves `routes` (path -> Behaviour) on host:free port; unknown paths get a 404."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.routes: dict[str, Behaviour] = {}
        self.requests: list[tuple[str, bytes]] = []
        self.stop = threading.Event()
        server = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                sock: socket.socket = self.request
                sock.settimeout(30)
                data = b""
                while b"\r\n\r\n" not in data and len(data) < 65536:
                    more = sock.recv(4096)
                    if not more:
                        return
                    data += more
                path = data.split(b" ", 2)[1].decode(errors="replace")
                server.requests.append((path, data))
                behaviour = server.routes.get(path) or reply(
                    head("404 Not Found", Content_Length=0)
                )
                started = time.monotonic()
                try:
                    behaviour(sock, server.stop)
                except OSError:
                    pass  # the client went away: that is the point of most routes
                finally:
                    server.elapsed[path] = time.monotonic() - started

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.elapsed: dict[str, float] = {}
        self.server = Server((host, 0), Handler)
        self.host = host
        self.port = int(self.server.server_address[1])
        self.thread = serving_thread(self.server)

    @property
    def base(self) -> str:
        """http://host:port"""
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> RawServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()
