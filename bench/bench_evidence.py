"""What a capture's evidence costs, on the 60-page site through the whole stack: the CPU the
browser WARC, the WACZ and the manifest (with its timestamps) add per page, the storage
they add per page, and `dla verify` throughput.

    .venv/bin/python -m bench.bench_evidence [--pages 60] [--rounds 3] [--no-docs]

The site (../shared/bench/gen_site.py, every page, image and stylesheet; skipped cleanly
when ../shared is absent) is served on 127.0.0.2 from this process, a fixture forum on
127.0.0.1 posts one link per page in one poll, and a local RFC 3161 authority
(testkit/tsa.py, `openssl ts -reply`) is `TSA_URLS`, so every manifest is timestamped and
every token checked. The stack runs as `make up` runs it (nats-server, SeaweedFS, writer,
poller, archiver, media, web), fresh for each run, in five configurations, their order
rotated each round so drift on a shared machine falls on all of them:

- `all`: the defaults (browser WARC, manifest and timestamps, WACZ);
- `no browser WARC`: `TRAFFIC_ENABLED=false` (the archiver records no traffic);
- `no WACZ`: `WACZ_ENABLED=false` (manifest and timestamps only);
- `no evidence`: `EVIDENCE_ENABLED=false` (no manifest, WACZ or timestamps; browser WARC on);
- `none`: both of those off: the capture as it was before evidence ("today's").

A run's CPU is that of every process of the stack (services, their hooks and Chromium,
nats-server, SeaweedFS; the site, forum and authority in this process are left out), from
an idle stack to the moment every capture job ended and, with evidence, every capture has
its manifest and every token was granted (each token a file of its own). Each
feature's cost is the difference of two configurations run in the same round: browser WARC
= all - no browser WARC, WACZ = all - no WACZ, manifest = no WACZ - no evidence, all of it =
all - none. Storage is read from the writer's database after the last `all` run; `dla
verify` is timed on that run's captures, one process per file or link, one at a time:
`dla verify FILE.wacz` on each WACZ downloaded first, `dla verify LINK_ID` through the web's
API and S3 (every file of the capture downloaded and hashed, the tokens checked).

Prints the results and replaces the "## Evidence costs" section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import mimetypes
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path

from bench.bench_capture import tree_cpu_seconds
from bench.evidence_figures import Run, Storage, Verified, report, storage, verify_all
from bench.report import write_section
from services.supervisor.children import free_ports
from services.supervisor.stack import Stack
from shared import processes
from testkit.forum import Post, posts_rss
from testkit.httpserver import FixtureServer, Reply
from testkit.stack_env import own_engines_env
from testkit.tsa import LocalTSA

REPO = Path(__file__).resolve().parents[1]
GEN_SITE = REPO.parent / "shared" / "bench" / "gen_site.py"
SECTION = "Evidence costs"
SITE_HOST = "127.0.0.2"
CONFIGS: dict[str, dict[str, str]] = {
    "all": {},
    "no browser WARC": {"TRAFFIC_ENABLED": "false"},
    "no WACZ": {"WACZ_ENABLED": "false"},
    "no evidence": {"EVIDENCE_ENABLED": "false"},
    "none": {"TRAFFIC_ENABLED": "false", "EVIDENCE_ENABLED": "false"},
}
"""Each configuration's settings over the defaults."""
IDLE_CPU_RATE = 0.15
"""CPU-s per second below which the started stack counts as idle (polls and scheduler)."""


def site_routes(work: Path, site: FixtureServer) -> list[str]:
    """Serve every file of the generated site; the page URLs, in order."""
    out = work / "site"
    subprocess.run([sys.executable, str(GEN_SITE), str(out), "--base-url", site.base],
                   check=True, capture_output=True)  # fmt: skip
    for f in out.rglob("*"):
        if f.is_file():
            ctype = mimetypes.guess_type(f.name)[0] or "application/octet-stream"
            site.routes["/" + f.relative_to(out).as_posix()] = Reply(
                f.read_bytes(), headers={"Content-Type": ctype}
            )
    return (out / "urls.txt").read_text().split()


def stack_pids(stack: Stack) -> list[int]:
    """Every process of the stack: the services with what they started, and the engines."""
    roots = [sp.child.pid for sp in stack.procs.values()]
    roots += [e.child.pid for e in (stack.nats, stack.weed) if e is not None]
    table = processes.parents()
    return [p for root in roots for p in processes.descendants(root, table)]


def wait_idle(stack: Stack, timeout: float = 90) -> None:
    """Until the started stack (Chromium warmed, first polls done) is idle."""
    time.sleep(3)
    deadline = time.monotonic() + timeout
    last = tree_cpu_seconds(stack_pids(stack))
    while time.monotonic() < deadline:
        time.sleep(1)
        now = tree_cpu_seconds(stack_pids(stack))
        if now - last < IDLE_CPU_RATE:
            return
        last = now
    print(f"  (the stack was not idle after {timeout:g} s; measuring anyway)")


def finished(db_path: Path, pages: int, evidence: bool) -> bool:
    """Every capture job ended and, with evidence, every capture's manifest and tokens in."""
    if not db_path.exists():
        return False
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10) as db:

        def q(sql: str) -> int:
            return int(db.execute(sql).fetchone()[0])

        if q("SELECT count(*) FROM archive_jobs WHERE kind = 'capture'") < pages:
            return False
        if q("SELECT count(*) FROM archive_jobs WHERE status IN ('queued', 'running')"):
            return False
        if not evidence:
            return True
        kept = q("SELECT count(DISTINCT snapshot_id) FROM archive_artifacts"
                 " WHERE plugin IS NOT 'evidence'")  # fmt: skip
        manifests = q("SELECT count(*) FROM evidence")
        pending = q("SELECT count(*) FROM evidence_timestamps WHERE status != 'granted'")
        granted = q("SELECT count(*) FROM evidence_timestamps WHERE status = 'granted'")
        return bool(manifests >= kept and not pending and granted >= manifests)


def outcomes(db_path: Path) -> dict[str, int]:
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10) as db:
        rows = db.execute("SELECT coalesce(outcome, '?'), count(*) FROM snapshots GROUP BY 1")
        return dict(sorted(rows.fetchall()))


class Bench:
    """The site, forum and authority, shared by every run."""

    def __init__(self, work: Path, pages: int, timeout: float) -> None:
        self.work, self.pages, self.timeout = work, pages, timeout
        self.cm = ExitStack()
        site = self.cm.enter_context(FixtureServer(SITE_HOST))
        self.urls = site_routes(work, site)[:pages]
        self.forum = self.cm.enter_context(FixtureServer("127.0.0.1"))
        self.tsa = self.cm.enter_context(LocalTSA(work / "tsa"))
        self.armed = threading.Event()
        self.served_at: float | None = None
        posts = [Post(1000 + i, 50 + i, f'<p>Read <a href="{u}">this</a>.</p>')
                 for i, u in enumerate(self.urls)]  # fmt: skip
        full, empty = posts_rss(self.forum.base, posts), posts_rss(self.forum.base, [])

        def rss(_: object) -> Reply:
            if self.armed.is_set() and self.served_at is None:
                self.served_at = time.monotonic()
            return Reply(full if self.armed.is_set() else empty,
                         headers={"Content-Type": "application/rss+xml"})  # fmt: skip

        self.forum.routes["/posts.rss"] = rss

    def close(self) -> None:
        self.cm.close()

    def run(self, config: str, round_: int, last: bool) -> tuple[Run, Storage | None, Verified]:
        """One fresh stack in one configuration; with `last`, storage and verify too."""
        data = self.work / f"run-{round_}-{config.replace(' ', '-')}"
        (web_port,) = free_ports(1)
        env = own_engines_env()
        env.update(
            RSS_URL=f"{self.forum.base}/posts.rss", POLL_INTERVAL_SECONDS="1",
            ALLOW_PRIVATE_TARGETS="true", ARCHIVE_MODE="all", WEB_PORT=str(web_port),
            LOG_LEVEL="WARNING", TSA_URLS=self.tsa.url, TSA_CA_FILE=str(self.tsa.ca.root_pem),
        )  # fmt: skip
        env.update(CONFIGS[config])
        evidence = env.get("EVIDENCE_ENABLED") != "false"
        stack = Stack(data_dir=data, env=env)
        db_path = data / "archive.sqlite3"
        self.armed.clear()
        self.served_at = None
        stored, verified = None, Verified()
        try:
            stack.start_engines()
            stack.start_services()
            wait_idle(stack)
            cpu0 = tree_cpu_seconds(stack_pids(stack))
            t0 = time.monotonic()
            self.armed.set()
            deadline = t0 + self.timeout
            while not finished(db_path, len(self.urls), evidence):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{config}: not done within {self.timeout:g} s ({data})")
                time.sleep(0.5)
            cpu = tree_cpu_seconds(stack_pids(stack)) - cpu0
            wall = time.monotonic() - (self.served_at or t0)
            if last:
                stored = storage(db_path)
                verified = verify_all(
                    db_path, f"http://127.0.0.1:{web_port}", self.tsa.ca.root_pem, data / "v"
                )
        finally:
            stack.stop()
        run = Run(config, round_, cpu, wall, len(self.urls), outcomes(db_path))
        return run, stored, verified


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=60, help="pages of the site (60 max)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each configuration")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds a run may take")
    parser.add_argument("--no-docs", action="store_true", help="print only")
    args = parser.parse_args()
    if not GEN_SITE.exists():
        print(f"skipped: {GEN_SITE} is absent")
        return 0
    work = Path(tempfile.mkdtemp(prefix="dla-bench-evidence-"))
    bench = Bench(work, args.pages, args.timeout)
    runs: list[Run] = []
    stored: Storage | None = None
    verified = Verified()
    names = list(CONFIGS)
    try:
        for r in range(args.rounds):
            order = names[r % len(names) :] + names[: r % len(names)]
            for config in order:
                last = r == args.rounds - 1 and config == "all"
                t = time.monotonic()
                run, s, v = bench.run(config, r, last)
                runs.append(run)
                stored, verified = (s, v) if last else (stored, verified)
                print(f"round {r + 1} {config}: {run.cpu_per_page:.2f} CPU-s/page,"
                      f" {run.wall / run.pages:.2f} s/page, {run.outcomes}"
                      f" ({time.monotonic() - t:.0f} s)", flush=True)  # fmt: skip
    finally:
        bench.close()
    load = os.getloadavg()
    body = report(runs, list(CONFIGS), stored, verified, load, GEN_SITE.name)
    print(body)
    if not args.no_docs:
        cmd = f".venv/bin/python -m bench.bench_evidence --pages {args.pages}"
        cmd += f" --rounds {args.rounds}"
        write_section(SECTION, cmd, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
