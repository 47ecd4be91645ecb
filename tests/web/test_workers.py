"""WEB_WORKERS > 1: worker processes on one port, one set of rate limits, summed metrics."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from multiprocessing import AuthenticationError
from pathlib import Path

import httpx
import psutil
import pytest

from services.supervisor.children import Child, free_ports
from services.web.ratelimit import SharedLimits, SlidingWindow
from shared import processes
from testkit.waiting import wait_for


def test_shared_limits_are_one_set_for_every_client(tmp_path: Path) -> None:
    windows = {"per_client": SlidingWindow(2, 600), "per_link": SlidingWindow(1, 300)}
    shared = SharedLimits(windows, str(tmp_path / "limits.sock"))
    shared.start()
    try:
        a = SharedLimits.connect(shared.address, shared.authkey, windows)
        b = SharedLimits.connect(shared.address, shared.authkey, windows)
        assert a["per_client"].check("10.0.0.1") == 0
        assert b["per_client"].check("10.0.0.1") == 0
        assert a["per_client"].check("10.0.0.1") > 0  # the third in the window, whoever asks
        b["per_client"].undo("10.0.0.1")
        assert a["per_client"].check("10.0.0.1") == 0
        assert b["per_link"].check("7") == 0 and a["per_link"].check("7") > 0
        assert windows["per_client"].check("10.0.0.1") > 0  # the very windows of the server
        with pytest.raises(AuthenticationError):
            SharedLimits.connect(shared.address, b"not the key", windows)
    finally:
        shared.stop()
    assert not (tmp_path / "limits.sock").exists()


def children_of(pid: int) -> set[int]:
    return set(processes.children(pid))


@pytest.fixture(scope="module")
def web(
    archive: Path, module_nats_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Child, str]]:
    """`python -m services.web` with two workers (S3 on a port nobody serves), shared by the
    module's two tests: the one that only reads runs first, the one that kills a worker and
    stops the service last."""
    web_port, metrics_port, dead_s3 = free_ports(3)
    env = {
        **os.environ,
        "DATA_DIR": str(archive),
        "NATS_URL": module_nats_url,
        "S3_ENDPOINT": f"http://127.0.0.1:{dead_s3}",
        "AWS_ACCESS_KEY_ID": "k",
        "AWS_SECRET_ACCESS_KEY": "s",
        "WEB_PORT": str(web_port),
        "METRICS_PORT": str(metrics_port),
        "WEB_WORKERS": "2",
        "ACTIONS_PER_CLIENT": "2",
    }
    log = tmp_path_factory.mktemp("web-workers") / "web.log"
    child = Child("web", [sys.executable, "-m", "services.web"], env, log)
    child.start()
    base = f"http://127.0.0.1:{web_port}"
    try:
        wait_for(
            lambda: httpx.get(f"{base}/index.json", timeout=5).status_code == 200,
            60,
            "the web answering",
            interval=0.2,
            ignore=(httpx.HTTPError,),
        )
        yield child, base
    finally:
        child.stop()


def requests_of(base: str, route: str) -> float:
    text = httpx.get(f"{base}/metrics", timeout=5).text
    for line in text.splitlines():
        series = line.startswith("dla_web_requests_total{") and f'route="{route}"' in line
        if series and 'status="200"' in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def submit(base: str, url: str) -> int:
    """POST /submit on a new connection (so on either worker); a 503 (a worker whose NATS
    connection is not up yet) is asked again, for 30 s at the most."""

    def answer() -> int | None:
        status = httpx.post(f"{base}/submit", json={"url": url}, timeout=10).status_code
        return None if status == 503 else status

    return wait_for(answer, 30, f"an answer but 503 to POST /submit {url}", interval=0.2)


def established_by_pid(port: int, pids: set[int]) -> dict[int, int]:
    """How many established connections to 127.0.0.1:`port` each process holds."""
    held = {}
    for pid in pids:
        try:
            conns = psutil.Process(pid).net_connections(kind="tcp")
        except psutil.NoSuchProcess:
            conns = []
        held[pid] = sum(
            1 for c in conns if c.status == psutil.CONN_ESTABLISHED and c.laddr.port == port
        )
    return held


def test_kept_alive_connections_even_out_over_the_workers(web: tuple[Child, str]) -> None:
    """However the kernel hashed 24 connections, a worker above its share closes some
    (`Connection: close`) and clients that reconnect as HTTP/1.1 clients do end up holding
    12 each (asked round after round until they do, within a deadline)."""
    child, base = web
    port = int(base.rsplit(":", 1)[1])
    clients = [httpx.Client(base_url=base, timeout=10) for _ in range(24)]
    workers = children_of(child.pid)
    closed = 0

    def request_each() -> None:
        nonlocal closed
        for client in clients:
            response = client.get("/index.json?limit=1")  # httpx reconnects after a close
            closed += response.headers.get("connection") == "close"

    def even() -> dict[int, int] | None:
        request_each()
        held = established_by_pid(port, workers)
        return held if sorted(held.values()) == [12, 12] else None

    try:
        request_each()  # a worker may close some already while the connections arrive
        landed = established_by_pid(port, workers)
        held = wait_for(even, 60, "12 connections on each worker", interval=0)
        # what the busier worker held past its share, and those closed before the count
        shed = max(landed.values()) - 12 + 24 - sum(landed.values())
        assert closed >= shed, (landed, held, closed)
    finally:
        for client in clients:
            client.close()


@pytest.mark.integration
def test_workers_share_one_port_one_set_of_limits_and_their_metrics(
    web: tuple[Child, str],
) -> None:
    child, base = web

    def two_workers() -> set[int] | None:
        found = children_of(child.pid)
        return found if len(found) == 2 else None

    workers = wait_for(two_workers, 60, "two workers")
    before = requests_of(base, "/search.json")
    for _ in range(12):  # each on a new connection: whichever worker accepts it
        reply = httpx.get(f"{base}/search.json", params={"q": "sourdough"}, timeout=5)
        assert reply.status_code == 200 and reply.json()["total"] == 2
    # every worker's count, summed, whichever worker answers the scrape
    assert requests_of(base, "/search.json") == before + 12
    assert requests_of(base, "/search.json") == before + 12

    # ACTIONS_PER_CLIENT=2 for the service, not for each worker
    assert submit(base, "https://x.com/a/status/1") == 202
    assert submit(base, "https://x.com/a/status/2") == 202
    assert submit(base, "https://x.com/a/status/3") == 429

    # a worker that dies is replaced; pages keep answering meanwhile
    dead = min(workers)
    os.kill(dead, signal.SIGKILL)
    wait_for(
        lambda: len(children_of(child.pid)) == 2 and dead not in children_of(child.pid),
        60,
        "a new worker",
    )
    assert httpx.get(f"{base}/links/1.json", timeout=5).status_code == 200
    assert requests_of(base, "/search.json") == before + 12  # the dead one's count is kept

    current = children_of(child.pid)
    assert child.stop() == 0
    assert not any(processes.exists(pid) for pid in current)
