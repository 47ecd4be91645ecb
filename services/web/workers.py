"""Several processes serving the UI on one port (``WEB_WORKERS`` > 1).

One Python process runs its Python code on one core at a time: FastAPI, Jinja and JSON
for each request hold the GIL, so one process cannot use a second core however many
requests wait. The service process (``service.py``: NATS, /healthz and /metrics on
METRICS_PORT, the stop signal) then only supervises: it reserves WEB_HOST:WEB_PORT and
starts ``WEB_WORKERS`` worker processes (``python -m services.web.workers``), each with its
own event loop, read-only database connections, query threads, S3 clients and NATS
connection, and its own listening socket on that port (``SO_REUSEPORT``: the kernel spreads
new connections over them by a hash of their addresses; with one shared socket, the first
worker to wake took every connection that was waiting, also with libuv's
UV_TCP_SINGLE_ACCEPT). Kept-alive connections stay where they land, so a worker holding more
than its share closes one now and then (``balance.py``). A
worker that dies is started again after a second; on stop each is sent SIGTERM (uvicorn
finishes the requests in flight) and killed if it has not exited after ``STOP_GRACE_S``.
A worker also exits when the service process dies (``PR_SET_PDEATHSIG``).

What must be one for the whole service stays in the service process: the actions' rate
limits (served to the workers by ``ratelimit.SharedLimits``). Request metrics are counted
by each worker in ``PROMETHEUS_MULTIPROC_DIR`` and summed by whichever worker answers
/metrics (``metrics.exposition``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
from pathlib import Path

import uvicorn
import uvloop
from prometheus_client import multiprocess

from services.web.app import create_app, freeze_startup_objects
from services.web.balance import ConnectionShares, Rebalance
from services.web.connections import connect
from services.web.ratelimit import SharedLimits
from services.web.settings import WebSettings
from services.web.state import WebState, rate_limits
from shared.lifecycle import ServiceContext
from shared.logs import setup_logging

log = logging.getLogger(__name__)

LIMITS_ADDRESS = "DLA_WEB_LIMITS_ADDRESS"
LIMITS_KEY = "DLA_WEB_LIMITS_KEY"
PARENT_PID = "DLA_WEB_PARENT_PID"
SHARES_FILE = "DLA_WEB_SHARES_FILE"
WORKER_SLOT = "DLA_WEB_WORKER_SLOT"
METRICS_DIR = "PROMETHEUS_MULTIPROC_DIR"
RESTART_DELAY_S = 1.0
STOP_GRACE_S = 10.0
BACKLOG = 2048


def bind(host: str, port: int, *, listen: bool) -> socket.socket:
    """A socket on host:port shared with the other workers' (``SO_REUSEPORT``). The service
    process binds one without listening: it holds the port (and picks it when WEB_PORT is
    0) but is given no connections."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    if listen:
        sock.listen(BACKLOG)
    return sock


class Workers:
    """``count`` worker processes, kept running until ``stop`` is set."""

    def __init__(self, count: int, env: dict[str, str]) -> None:
        self.count = count
        self.env = env
        self.procs: dict[int, asyncio.subprocess.Process] = {}
        self.metrics_dir = env[METRICS_DIR]

    async def run(self, stop: asyncio.Event) -> None:
        """Keep every slot's worker running until ``stop``; then stop them all."""
        await asyncio.gather(*(self._keep(slot, stop) for slot in range(self.count)))

    async def check(self) -> dict[str, object]:
        """/healthz: how many workers are up."""
        up = sum(1 for p in self.procs.values() if p.returncode is None)
        return {"ok": up == self.count, "workers": f"{up}/{self.count} up"}

    async def _keep(self, slot: int, stop: asyncio.Event) -> None:
        stopping = asyncio.create_task(stop.wait())
        try:
            while not stop.is_set():
                proc = await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    "services.web.workers",
                    env={**self.env, WORKER_SLOT: str(slot)},
                )
                self.procs[slot] = proc
                exited = asyncio.create_task(proc.wait())
                await asyncio.wait({exited, stopping}, return_when=asyncio.FIRST_COMPLETED)
                if stop.is_set():
                    await self._stop(proc, exited)
                    return
                log.error(
                    "web worker %d (pid %d) exited with %s; starting another",
                    slot,
                    proc.pid,
                    proc.returncode,
                )
                multiprocess.mark_process_dead(proc.pid, self.metrics_dir)  # type: ignore[no-untyped-call]
                ConnectionShares.clear(Path(self.env[SHARES_FILE]), slot)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), RESTART_DELAY_S)
        finally:
            stopping.cancel()

    @staticmethod
    async def _stop(proc: asyncio.subprocess.Process, exited: asyncio.Task[int]) -> None:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(asyncio.shield(exited), STOP_GRACE_S)
        except TimeoutError:
            log.warning("web worker pid %d did not stop in %g s: killed", proc.pid, STOP_GRACE_S)
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await exited


async def serve_workers(ctx: ServiceContext[WebSettings]) -> None:
    """The service body with ``WEB_WORKERS`` > 1: supervise the workers until stopped."""
    settings = ctx.settings
    runtime = Path(tempfile.mkdtemp(prefix="dla-web-"))
    (runtime / "metrics").mkdir()
    reserved = bind(settings.web_host, settings.web_port, listen=False)
    limits = SharedLimits(dict(rate_limits(settings)), str(runtime / "limits.sock"))
    ConnectionShares.create(runtime / "shares", settings.web_workers)
    limits.start()
    env = {
        **os.environ,
        "WEB_PORT": str(reserved.getsockname()[1]),
        LIMITS_ADDRESS: limits.address,
        LIMITS_KEY: limits.authkey.hex(),
        PARENT_PID: str(os.getpid()),
        METRICS_DIR: str(runtime / "metrics"),
        SHARES_FILE: str(runtime / "shares"),
    }
    workers = Workers(settings.web_workers, env)
    ctx.add_check(workers.check)
    log.info("web: %d workers on http://%s:%d", workers.count, settings.web_host, settings.web_port)
    try:
        await workers.run(ctx.stop)
    finally:
        limits.stop()
        reserved.close()
        shutil.rmtree(runtime, ignore_errors=True)


def _die_with_parent() -> None:
    """SIGTERM to this worker when the service process dies, however it dies."""
    with contextlib.suppress(OSError, AttributeError):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
    if os.getppid() != int(os.environ[PARENT_PID]):  # it died before prctl
        raise SystemExit("web worker: the service process is gone")


async def _serve(settings: WebSettings, state: WebState, sock: socket.socket) -> None:
    async with connect(state):  # S3 now, NATS in the background (actions wait for it)
        shares = ConnectionShares(
            Path(os.environ[SHARES_FILE]), int(os.environ[WORKER_SLOT]), settings.web_workers
        )
        app = Rebalance(create_app(settings, state), shares)
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
        server = uvicorn.Server(config)
        app.held = lambda: len(server.server_state.connections)
        freeze_startup_objects()
        await server.serve(sockets=[sock])


def main() -> None:
    """A worker process (started by ``serve_workers``, never by hand)."""
    settings = WebSettings()
    setup_logging(settings.log_level, "web")
    _die_with_parent()
    limits = SharedLimits.connect(
        os.environ[LIMITS_ADDRESS], bytes.fromhex(os.environ[LIMITS_KEY]), rate_limits(settings)
    )
    sock = bind(settings.web_host, settings.web_port, listen=True)
    state = WebState.of(settings, limits)
    uvloop.run(_serve(settings, state, sock))


if __name__ == "__main__":
    main()
