"""Even shares of kept-alive connections over the web's worker processes.

Each worker listens on its own ``SO_REUSEPORT`` socket and the kernel picks one for each new
connection by a hash of its addresses: 20 connections from one client (a load balancer, a
reverse proxy's pool, a benchmark) land 10/10, 7/13 or 5/15, and stay where they land. A
worker holding 15 serves three times the requests of one holding 5 on the same core share,
so its answers wait longest: with 20 clients, search p95 was 43-49 ms at 10/10 and 71 ms at
5/15 (docs/benchmarks.md).

So each worker publishes how many connections it holds in a small shared file (one 8-byte
slot per worker), and one that holds more than its share (the total over the workers,
rounded up) answers one request with ``Connection: close`` (at most one every
``SHED_INTERVAL_S``, so it does not shed a dozen before its count catches up); the client
opens a new connection, which the kernel hashes again, and the shares even out within a
second or two. HTTP/1.1 clients reconnect on ``Connection: close`` as a matter of course.
"""

from __future__ import annotations

import math
import mmap
import struct
import time
from collections.abc import Callable
from pathlib import Path

from starlette.types import ASGIApp, Message, Receive, Scope, Send

SLOT = struct.Struct("<q")
SHED_INTERVAL_S = 0.05


class ConnectionShares:
    """The shared file of every worker's connection count (``slot`` is this worker's)."""

    def __init__(self, path: Path, slot: int, workers: int) -> None:
        self.slot, self.workers = slot, workers
        with path.open("r+b") as f:
            self._map = mmap.mmap(f.fileno(), SLOT.size * workers)

    @staticmethod
    def create(path: Path, workers: int) -> None:
        """The file, every count zero (by the service process, before the workers start)."""
        path.write_bytes(bytes(SLOT.size * workers))

    @staticmethod
    def clear(path: Path, slot: int) -> None:
        """A worker that exited holds nothing."""
        with path.open("r+b") as f:
            f.seek(slot * SLOT.size)
            f.write(SLOT.pack(0))

    def publish(self, held: int) -> None:
        """This worker's count."""
        SLOT.pack_into(self._map, self.slot * SLOT.size, held)

    def over_share(self, held: int) -> bool:
        """True when this worker holds more than its share of all the workers' connections."""
        self.publish(held)
        total: int = sum(SLOT.unpack_from(self._map, i * SLOT.size)[0] for i in range(self.workers))
        return held > math.ceil(total / self.workers)


class Rebalance:
    """ASGI middleware: ``Connection: close`` on a response while this worker holds more than
    its share (``held`` counts its open connections)."""

    def __init__(self, app: ASGIApp, shares: ConnectionShares) -> None:
        self.app = app
        self.shares = shares
        self.held: Callable[[], int] = lambda: 0
        """Set once the server exists (``uvicorn.Server.server_state.connections``)."""
        self._last_shed = 0.0

    def _shed(self) -> bool:
        if not self.shares.over_share(self.held()):
            return False
        now = time.monotonic()
        if now - self._last_shed < SHED_INTERVAL_S:
            return False
        self._last_shed = now
        return True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("http_version") != "1.1":
            await self.app(scope, receive, send)
            return

        async def send_maybe_closing(message: Message) -> None:
            if message["type"] == "http.response.start" and self._shed():
                headers = list(message.get("headers", []))
                if not any(k.lower() == b"connection" for k, _ in headers):
                    headers.append((b"connection", b"close"))
                    message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_maybe_closing)
