"""WEB_WORKERS > 1: worker processes on one port, one set of rate limits, summed metrics."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from multiprocessing import AuthenticationError
from pathlib import Path

import httpx
import pytest

from services.supervisor.children import Child, free_ports
from services.web.ratelimit import SharedLimits, SlidingWindow


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
    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == str(pid) and fields[0] != "Z":
            out.add(int(stat.parent.name))
    return out


def wait_for(what: str, ok, timeout: float = 60):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = ok()
        except httpx.HTTPError:
            value = None
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


@pytest.fixture
def web(archive: Path, nats_url: str, tmp_path: Path) -> Iterator[tuple[Child, str]]:
    """`python -m services.web` with two workers (S3 on a port nobody serves)."""
    web_port, metrics_port, dead_s3 = free_ports(3)
    env = {
        **os.environ,
        "DATA_DIR": str(archive),
        "NATS_URL": nats_url,
        "S3_ENDPOINT": f"http://127.0.0.1:{dead_s3}",
        "AWS_ACCESS_KEY_ID": "k",
        "AWS_SECRET_ACCESS_KEY": "s",
        "WEB_PORT": str(web_port),
        "METRICS_PORT": str(metrics_port),
        "WEB_WORKERS": "2",
        "ACTIONS_PER_CLIENT": "2",
    }
    child = Child("web", [sys.executable, "-m", "services.web"], env, tmp_path / "web.log")
    child.start()
    base = f"http://127.0.0.1:{web_port}"
    try:
        wait_for("the web", lambda: httpx.get(f"{base}/index.json", timeout=5).status_code == 200)
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
    """POST /submit on a new connection (so on either worker); 503s (a worker whose NATS
    connection is not up yet) are asked again."""
    while True:
        status = httpx.post(f"{base}/submit", json={"url": url}, timeout=10).status_code
        if status != 503:
            return status
        time.sleep(0.2)


@pytest.mark.integration
def test_workers_share_one_port_one_set_of_limits_and_their_metrics(
    web: tuple[Child, str],
) -> None:
    child, base = web
    workers = wait_for(
        "two workers", lambda: len(children_of(child.pid)) == 2 and children_of(child.pid)
    )
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
        "a new worker",
        lambda: len(children_of(child.pid)) == 2 and dead not in children_of(child.pid),
    )
    assert httpx.get(f"{base}/links/1.json", timeout=5).status_code == 200
    assert requests_of(base, "/search.json") == before + 12  # the dead one's count is kept

    current = children_of(child.pid)
    assert child.stop() == 0
    assert not any(Path(f"/proc/{pid}").exists() for pid in current)


def established_by_pid(port: int, pids: set[int]) -> dict[int, int]:
    """How many established connections to 127.0.0.1:`port` each process holds (read from
    /proc: the sockets' inodes in /proc/net/tcp, matched with each process's fds)."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[1].split(":")[1], 16) == port and fields[3] == "01":
            inodes.add(fields[9])
    held = {}
    for pid in pids:
        links = []
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                links.append(os.readlink(fd))
            except OSError:
                continue
        held[pid] = sum(1 for link in links if link[8:-1] in inodes and link.startswith("socket:"))
    return held


def test_kept_alive_connections_even_out_over_the_workers(web: tuple[Child, str]) -> None:
    """However the kernel hashed 24 connections, a worker above its share closes some
    (`Connection: close`) and clients that reconnect as HTTP/1.1 clients do end up 12/12."""
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

    try:
        request_each()  # a worker may close some already while the connections arrive
        landed = established_by_pid(port, workers)
        for _ in range(30):
            request_each()
        held = established_by_pid(port, workers)
        assert sorted(held.values()) == [12, 12], (landed, held, closed)
        # what the busier worker held past its share, and those closed before the count
        shed = max(landed.values()) - 12 + 24 - sum(landed.values())
        assert closed >= shed, (landed, held, closed)
    finally:
        for client in clients:
            client.close()
