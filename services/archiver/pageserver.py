"""The page protocol's server: a Unix socket in the snapshot folder, one JSON line per request.

See shared/pageclient.py (the client and the error codes) and plugins/README.md (the
protocol). Each request runs under its `timeout` (seconds, capped by the server); requests
on one connection are answered in order, and operations on one page never overlap.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError

from services.archiver.browser import BrowserBroker
from services.archiver.pageops import OPERATIONS
from services.archiver.pagesession import OpError, PageOptions, PageSession
from shared import pageclient as proto
from shared.capture.worker_config import SnapshotResources

log = logging.getLogger(__name__)

SOCKET_NAME = ".page.sock"
LINE_LIMIT = 1024 * 1024


class PageServer:
    """Serves one PageSession on a Unix socket."""

    def __init__(self, session: PageSession, path: Path, max_timeout_s: float) -> None:
        self.session = session
        self.path = path
        self.max_timeout_s = max_timeout_s
        self._server: asyncio.Server | None = None
        self._conns: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Bind the socket and start answering."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        address, dir_fd = proto.unix_address(str(self.path))
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(address)
            sock.bind(address)
        finally:
            if dir_fd is not None:
                os.close(dir_fd)
        os.chmod(self.path, 0o600)
        self._server = await asyncio.start_unix_server(self._serve, sock=sock, limit=LINE_LIMIT)

    async def close(self) -> None:
        """Stop answering; drop open connections."""
        if self._server is not None:
            self._server.close()
        for t in list(self._conns):
            t.cancel()
        if self._conns:
            await asyncio.gather(*self._conns, return_exceptions=True)
        self._server = None
        with contextlib.suppress(OSError):
            address, dir_fd = proto.unix_address(str(self.path))
            try:
                os.unlink(address)
            finally:
                if dir_fd is not None:
                    os.close(dir_fd)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._conns.add(task)
        try:
            while True:
                try:
                    line = await reader.readline()
                except (ValueError, asyncio.LimitOverrunError):
                    writer.write(self._error(None, proto.E_PROTOCOL, "request line too long"))
                    break
                if not line:
                    break
                writer.write(await self.answer(line))
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._conns.discard(task)
            writer.close()

    @staticmethod
    def _error(req_id: Any, code: str, message: str) -> bytes:
        body = {"id": req_id, "ok": False, "error": {"code": code, "message": message}}
        return json.dumps(body).encode() + b"\n"

    async def answer(self, line: bytes) -> bytes:
        """The response line to one request line."""
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise ValueError("a request is a JSON object")
        except ValueError as exc:
            return self._error(None, proto.E_PROTOCOL, f"bad request line: {exc}")
        req_id, op = req.get("id"), req.get("op")
        if op not in proto.OPS:
            return self._error(req_id, proto.E_BAD_REQUEST, f"unknown op {op!r}")
        try:
            timeout = min(float(req.get("timeout") or 30), self.max_timeout_s)
        except (TypeError, ValueError):
            return self._error(req_id, proto.E_BAD_REQUEST, "timeout must be a number")
        req["timeout"] = timeout
        req["deadline"] = time.monotonic() + timeout
        handler = OPERATIONS[op]
        try:
            async with asyncio.timeout(timeout):
                async with self.session.lock:
                    result = await handler(self.session, req)
        except OpError as exc:
            return self._error(req_id, exc.code, str(exc))
        except TimeoutError:
            return self._error(req_id, proto.E_TIMEOUT, f"{op} took more than {timeout:g} s")
        except PlaywrightError as exc:
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            closed = "closed" in message.lower() or "crash" in message.lower()
            dead = closed or self.session.crashed
            code = self.session.dead_page().code if dead else proto.E_BROWSER
            return self._error(req_id, code, f"{op}: {message}")
        except Exception as exc:
            log.exception("page op %s failed", op)
            return self._error(req_id, proto.E_BROWSER, f"{op}: {type(exc).__name__}: {exc}")
        return json.dumps({"id": req_id, "ok": True, "result": result}).encode() + b"\n"


@contextlib.asynccontextmanager
async def page_resources(
    broker: BrowserBroker, out_dir: Path, options: PageOptions, max_timeout_s: float = 600.0
) -> AsyncIterator[SnapshotResources]:
    """Serve a snapshot's page for its hooks: the env to give them (PAGE_SOCKET), and how to
    end the page (socket, context, egress proxy) before the snapshot does, after step 7."""
    session = PageSession(broker, out_dir, options)
    server = PageServer(session, out_dir / SOCKET_NAME, max_timeout_s)
    await server.start()

    async def end() -> None:
        await server.close()
        await session.close()

    try:
        yield SnapshotResources({proto.SOCKET_ENV: str(server.path)}, end)
    finally:
        await end()


@contextlib.asynccontextmanager
async def page_socket(
    broker: BrowserBroker, out_dir: Path, options: PageOptions, max_timeout_s: float = 600.0
) -> AsyncIterator[Mapping[str, str]]:
    """Serve a snapshot's page for its hooks; yields the env to give them (PAGE_SOCKET)."""
    async with page_resources(broker, out_dir, options, max_timeout_s) as resources:
        yield resources.env
