"""Web: search latency on a 1,000,000-link archive with 20 concurrent clients, and the
home-page and link-page rates.

The database is generated once (``bench/web_corpus.py``: SQL bulk inserts on the real
migrations, Zipf-like text in FTS5) and cached under ``bench/out/``. The web runs as in
production: ``python -m services.web`` (a nats-server beside it; S3 absent: it plays no part
in these pages) with ``WEB_WORKERS`` worker processes (``--workers``, default one per
core). The load comes from this process with N concurrent keep-alive HTTP/1.1 clients,
each sending its next request as soon as the previous one is answered.

The clients are a few lines of asyncio streams, not httpx: on this machine httpx spends
about 3 ms of CPU per request (as much as the server's whole search), the load generator
shares the server's cores, and 20 httpx clients alone top out near 250 requests/s against
a server that answers instantly.

Run: ``.venv/bin/python -m bench.bench_web`` (from the repository root).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from bench.report import write_section
from bench.web_corpus import VOCABULARY, check, corpus, word
from services.supervisor.children import Child, free_ports, wait_for_port
from services.supervisor.infra import Nats, start_nats

OUT = Path(__file__).resolve().parent / "out"


@dataclass
class Run:
    """Latencies of one load phase."""

    name: str
    latencies: list[float]
    seconds: float
    errors: int
    cpu_ms: float = 0.0
    """Server CPU time per request (filled in by ``measure``)."""
    reconnects: int = 0
    """Connections the server closed with ``Connection: close`` (and the client reopened)."""

    def pct(self, p: float) -> float:
        xs = sorted(self.latencies)
        return xs[min(len(xs) - 1, int(len(xs) * p / 100))] * 1000

    def rate(self) -> float:
        return len(self.latencies) / self.seconds


async def get(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str, path: str
) -> tuple[int, bool]:
    """One GET on a kept-alive connection: the status, and whether the server closes the
    connection after it (``Connection: close``; the body is read and dropped)."""
    writer.write(f"GET {quote(path, safe='/?=&%')} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    head = (await reader.readuntil(b"\r\n\r\n")).lower()
    status = int(head[9:12])
    closing = b"\r\nconnection: close\r\n" in head
    at = head.find(b"\r\ncontent-length:")
    if at >= 0:
        await reader.readexactly(int(head[at + 17 : head.index(b"\r\n", at + 2)]))
        return status, closing
    while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):  # chunked
        await reader.readexactly(size + 2)
    await reader.readuntil(b"\r\n")
    return status, closing


async def load(host: str, port: int, paths: Sequence[str], clients: int, name: str) -> Run:
    """Send every path, `clients` at a time, each client on its own connection."""
    queue: asyncio.Queue[str] = asyncio.Queue()
    for p in paths:
        queue.put_nowait(p)
    latencies: list[float] = []
    errors = reconnects = 0

    async def client() -> None:
        nonlocal errors, reconnects
        reader, writer = await asyncio.open_connection(host, port)
        closing = False
        try:
            while not queue.empty():
                path = queue.get_nowait()
                t = time.perf_counter()
                if closing:  # as any HTTP/1.1 client does: a new connection (its time counts)
                    reconnects += 1
                    writer.close()
                    reader, writer = await asyncio.open_connection(host, port)
                try:
                    status, closing = await get(reader, writer, host, path)
                except (OSError, asyncio.IncompleteReadError):  # the server dropped it
                    errors += 1
                    writer.close()
                    reader, writer = await asyncio.open_connection(host, port)
                    continue
                latencies.append(time.perf_counter() - t)
                errors += status != 200
        finally:
            writer.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return Run(name, latencies, time.perf_counter() - t0, errors, reconnects=reconnects)


def search_paths(n: int, seed: int = 3) -> list[str]:
    """A mix: common words (most documents), middling, rare, two words, with a filter."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        kind = i % 5
        if kind == 0:
            q = word(rng.randrange(0, 10))
        elif kind == 1:
            q = word(rng.randrange(100, 1000))
        elif kind == 2:
            q = word(rng.randrange(5000, VOCABULARY))
        elif kind == 3:
            q = f"{word(rng.randrange(0, 50))} {word(rng.randrange(200, 2000))}"
        else:
            q = f"{word(rng.randrange(10, 500))}&domain=site{rng.randrange(500)}.example"
        out.append(f"/search.json?q={q}")
    return out


async def measure(
    host: str, port: int, links: int, requests: int, clients: int, server: int
) -> list[Run]:
    rng = random.Random(5)
    phases = [
        (search_paths(requests), clients, f"search, {clients} clients"),
        (search_paths(requests // 4, seed=4), 1, "search, 1 client"),
        (["/"] * requests, clients, f"home page `/`, {clients} clients"),
        (["/index.json?limit=50"] * requests, clients,
         f"`/index.json?limit=50`, {clients} clients"),
        ([f"/links/{rng.randrange(1, links)}" for _ in range(requests)], clients,
         f"link page `/links/{{id}}`, {clients} clients"),
    ]  # fmt: skip
    # Steady state, as a long-running server is: each worker's read connections fill their
    # page caches and the interpreter specialises the hot paths over the first few thousand
    # requests (a fresh server's first 2,000 searches measured p95 45-53 ms, the same
    # server's later rounds 36-40 ms).
    await load(host, port, search_paths(requests, seed=99), clients, "warm-up")
    runs = []
    for paths, n, name in phases:
        cpu = cpu_seconds(server)
        run = await load(host, port, paths, n, name)
        run.cpu_ms = (cpu_seconds(server) - cpu) / len(paths) * 1000
        runs.append(run)
    return runs


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of a process and its children (the web's workers)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if stat.parent.name == str(pid) or fields[1] == str(pid):
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def report(
    runs: list[Run], links: int, target_ms: float, load: tuple[float, float], workers: int
) -> str:
    lines = [
        "| load | requests | req/s | p50 | p95 | p99 | server CPU per request | errors"
        " | reconnects |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        p95 = f"{r.pct(95):.1f} ms"
        if r.name.startswith("search") and "20" in r.name:
            p95 = f"**{p95}**"
        lines.append(
            f"| {r.name} | {len(r.latencies):,} | {r.rate():,.0f} | {r.pct(50):.1f} ms | {p95}"
            f" | {r.pct(99):.1f} ms | {r.cpu_ms:.2f} ms | {r.errors} | {r.reconnects} |"
        )
    search = runs[0]
    verdict = "meets" if search.pct(95) <= target_ms else "misses"
    notes = (
        f"{links:,} links (90% listed: 85% archived with a screenshot, 10% failed with an error"
        " code, 5% skipped; a video on every 37th), 68 words of Zipf-distributed text each in"
        " FTS5 (porter unicode61). Searches mix a very common word (matches most documents),"
        " a middling one, a rare one, two words, and one word with a domain filter; newest"
        " first, 20 per page, with the match count (capped at 200) and highlighted snippets."
        " Before the phases, a warm-up of as many searches (different words) as the first"
        " phase."
        f" Search p95 with 20 concurrent clients {verdict} the {target_ms:.0f} ms target. The"
        f" server is `python -m services.web` with WEB_WORKERS={workers} (worker processes"
        " accepting on one port, each running its queries in a thread pool over its own"
        " read-only connections; a worker holding more than its share of the kept-alive"
        " connections answers now and then with `Connection: close`, and the client, as HTTP"
        " clients do, opens a new one: the reconnects column, whose time is in the next"
        " request's latency); server CPU per request is the CPU time of the service and"
        " its workers over the phase, divided by its requests. The load generator (lean"
        " asyncio clients, about 0.15 ms of CPU a request) runs on the same cores and the"
        " machine is shared with other work, so the 20-client figures include queueing"
        " behind other processes (the 1-client row is the service time). Load average of the"
        f" machine at the start and end of the run: {load[0]:.1f} / {load[1]:.1f}"
        f" ({os.cpu_count()} cores)."
    )
    return "\n".join(lines) + "\n\n" + notes


def serve(db: Path, port: int, workers: int, tmp: Path) -> tuple[Child, Nats]:
    """The web service as production runs it (NATS beside it; S3 on a port nobody serves)."""
    nats = start_nats(tmp / "nats", tmp / "nats.log")
    (dead_s3,) = free_ports(1)
    env = {
        **os.environ,
        "DATABASE_PATH": str(db),
        "DATA_DIR": str(tmp / "data"),
        "NATS_URL": nats.url,
        "S3_ENDPOINT": f"http://127.0.0.1:{dead_s3}",
        "WEB_HOST": "127.0.0.1",
        "WEB_PORT": str(port),
        "METRICS_PORT": "0",
        "WEB_WORKERS": str(workers),
        "LOG_LEVEL": "WARNING",
    }
    return Child("web", [sys.executable, "-m", "services.web"], env, tmp / "web.log").start(), nats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--links", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=2_000)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="WEB_WORKERS")
    parser.add_argument("--target-ms", type=float, default=50)
    parser.add_argument("--no-write", action="store_true", help="do not touch docs/benchmarks.md")
    args = parser.parse_args()
    db = corpus(OUT, args.links)
    links = check(db)
    (port,) = free_ports(1)
    with tempfile.TemporaryDirectory(prefix="bench-web-") as tmp:
        web, nats = serve(db, port, args.workers, Path(tmp))
        try:
            if not wait_for_port("127.0.0.1", port, timeout=60):
                raise SystemExit(f"the web did not start: see {tmp}/web.log")
            load_before = os.getloadavg()[0]
            runs = asyncio.run(
                measure("127.0.0.1", port, links, args.requests, args.clients, web.pid)
            )
            load_after = os.getloadavg()[0]
        finally:
            web.stop()
            nats.child.stop()
    body = report(runs, links, args.target_ms, (load_before, load_after), args.workers)
    print(body)
    if not args.no_write:
        write_section("Web", ".venv/bin/python -m bench.bench_web", body)


if __name__ == "__main__":
    main()
