"""The web's own worker processes against uvicorn's, side by side, on bench_web's archive.

Ours (`python -m services.web` with WEB_WORKERS, services/web/workers.py + balance.py): each
worker listens on its own SO_REUSEPORT socket and one holding more than its share of the
kept-alive connections sheds one now and then. The library's: `uvicorn --workers N` (its
multiprocess supervisor: every worker accepts on one inherited socket), the same app
(`create_app`), uvloop and httptools. bench_web's load (20 kept-alive clients, then 1, then
the home, JSON and link pages) runs against each in turn, alternating, so drifting machine
load hits both.

The decision (docs/architecture.md, "Libraries and plumbing"): our workers.py/balance.py go
if uvicorn's workers meet the figures in docs/benchmarks.md ("Web": search p95 with 20
clients, the pages' rates).

Run: ``.venv/bin/python -m bench.compare_web_workers [--rounds 2] [--links 1000000]``
(prints both tables; writes nothing).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

from fastapi import FastAPI

from bench.bench_web import OUT, Run, measure, report, serve
from bench.web_corpus import check, corpus
from services.supervisor.children import Child, free_ports, wait_for_port
from services.supervisor.infra import start_nats
from services.web.app import create_app
from services.web.settings import WebSettings


def app() -> FastAPI:
    """The app for uvicorn's workers (each opens its own connections)."""
    return create_app(WebSettings())


def serve_uvicorn(db: Path, port: int, workers: int, tmp: Path, nats_url: str) -> Child:
    (dead_s3,) = free_ports(1)
    env = {
        **os.environ,
        "DATABASE_PATH": str(db),
        "DATA_DIR": str(tmp / "data"),
        "NATS_URL": nats_url,
        "S3_ENDPOINT": f"http://127.0.0.1:{dead_s3}",
        "LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }
    argv = [
        sys.executable, "-m", "uvicorn", "--factory", "bench.compare_web_workers:app",
        "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers),
        "--loop", "uvloop", "--http", "httptools", "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip
    return Child("uvicorn", argv, env, tmp / "uvicorn.log").start()


def run_one(kind: str, db: Path, links: int, args: argparse.Namespace, tmp: Path) -> list[Run]:
    (port,) = free_ports(1)
    if kind == "ours":
        server, nats = serve(db, port, args.workers, tmp)
    else:
        nats = start_nats(tmp / f"nats-{port}", tmp / f"nats-{port}.log")
        server = serve_uvicorn(db, port, args.workers, tmp, nats.url)
    try:
        if not wait_for_port("127.0.0.1", port, timeout=60):
            raise SystemExit(f"{kind} did not start: see the logs in {tmp}")
        return asyncio.run(
            measure("127.0.0.1", port, links, args.requests, args.clients, server.pid)
        )
    finally:
        server.stop()
        nats.child.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--links", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=2_000)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--target-ms", type=float, default=50)
    args = parser.parse_args()
    db = corpus(OUT, args.links)
    links = check(db)
    for r in range(args.rounds):
        for kind in ("ours", "uvicorn"):
            with tempfile.TemporaryDirectory(prefix=f"compare-web-{kind}-") as tmp:
                load_before = os.getloadavg()[0]
                runs = run_one(kind, db, links, args, Path(tmp))
                load_after = os.getloadavg()[0]
            title = "WEB_WORKERS (ours)" if kind == "ours" else "uvicorn --workers"
            print(f"\n### round {r + 1}: {title}, {args.workers} workers\n")
            table = report(runs, links, args.target_ms, (load_before, load_after), args.workers)
            print(table.split("\n\n")[0])


if __name__ == "__main__":
    main()
