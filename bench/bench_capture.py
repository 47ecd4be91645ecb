"""Benchmark of the browser capture: the 60-page site of ../shared/bench with ONE archiver.

    .venv/bin/python -m bench.bench_capture [--contexts 4] [--captures 500] [--no-docs]

The site is generated at run time into a temp dir with ../shared/bench/gen_site.py and
served by `python -m http.server` on 127.0.0.1 (skipped cleanly when ../shared is absent).
One archiver runs in this process exactly as `python -m services.archiver` does: the
capture worker (`run_worker`) on a real NATS JetStream and a real SeaweedFS, with the
browser broker, its page sockets and every archiver plugin in plugins/ (all but media),
uploading every artifact to S3 and publishing every record. Its concurrency (snapshots at
once, each in its own browser context of the one Chromium) is `--contexts`.

1. Throughput: the 60 pages in batches of 20 (jobs published at once, wall time until the
   20th `capture.done`): s/page = batch wall / 20; median over the batches. Also pages/min,
   per-page latency (job published -> done) and CPU-s/page of the archiver's process tree
   (this process, its hook host and hooks, Playwright's driver, Chromium) and, apart, of
   NATS and SeaweedFS (they share the cores; the site server is left out).
2. Per-hook overhead of a browser hook: a hook process that connects to the page socket
   and runs one `evaluate("1")`, timed from the runner's `started` to its ArchiveResult
   arriving, minus the same evaluate's time measured inside the archiver.
3. Memory: PSS of the archiver's process tree (as above) after 50 captures and after
   `--captures` captures, cycling through the site.

Prints the results and replaces the "## Browser capture" section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.report import write_section
from services.archiver.browser import BrowserBroker
from services.archiver.service import browser_limits, snapshot_pages
from services.archiver.settings import ArchiverSettings
from services.supervisor.children import free_ports
from services.supervisor.infra import S3Credentials, start_nats, start_weed
from shared import bus
from shared import processes as proctree
from shared.capture.settings import REPO_PLUGINS
from shared.capture.worker import run_worker
from shared.capture.worker_config import WorkerConfig
from shared.hooks.records import ArchiveResultRecord, HookRecord
from shared.hooks.snapshot_runner import HookSpec, SnapshotSpec, run_snapshot
from shared.messages import CaptureDone, CaptureJob
from shared.s3 import ObjectStore
from shared.settings import public_env
from shared.subjects import ARCHIVER_JOBS, JOB_CAPTURE, RESULTS

REPO = Path(__file__).resolve().parents[1]
GEN_SITE = REPO.parent / "shared" / "bench" / "gen_site.py"
SECTION = "Browser capture"
TICKS = os.sysconf("SC_CLK_TCK")
BATCH = 20

EVAL_HOOK = """\
import time
from shared import pageclient as pc
from shared.hooks.records import emit
with pc.PageClient() as page:
    page.evaluate("1")
emit({"type": "ArchiveResult", "status": "succeeded", "output_str": "evaluated"})
"""


def tree_cpu_seconds(pids: list[int]) -> float:
    """utime+stime (+ reaped children's) of the processes, from /proc."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            stat = (Path("/proc") / str(pid) / "stat").read_bytes()
            f = stat[stat.rfind(b")") + 2 :].split()
            total += int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
    return total / TICKS


class Archiver:
    """One in-process archiver on real NATS and SeaweedFS; PSS/CPU exclude the engines."""

    def __init__(self, work: Path, contexts: int) -> None:
        self.work = work
        self.contexts = contexts
        self.engines: list[int] = []

    def engine_pids(self, table: dict[int, int] | None = None) -> list[int]:
        table = proctree.parents() if table is None else table
        return [p for root in self.engines for p in proctree.descendants(root, table)]

    def own_pids(self) -> list[int]:
        table = proctree.parents()
        excluded = set(self.engine_pids(table))
        return [p for p in proctree.descendants(os.getpid(), table) if p not in excluded]

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Archiver]:
        nats = start_nats(self.work / "nats", self.work / "nats.log")
        creds = S3Credentials("benchkey", "bench-secret-value-0123456789")
        weed = start_weed(self.work / "s3", "bench-archive", creds, self.work / "weed.log")
        self.engines = [nats.child.pid, weed.child.pid]
        env = {
            "NATS_URL": nats.url,
            "S3_ENDPOINT": weed.endpoint,
            "S3_BUCKET": "bench-archive",
            "AWS_ACCESS_KEY_ID": creds.access_key,
            "AWS_SECRET_ACCESS_KEY": creds.secret_key,
            "ALLOW_PRIVATE_TARGETS": "true",
            "DATA_DIR": str(self.work / "data"),
            "ARCHIVER_CONCURRENCY": str(self.contexts),
        }
        os.environ.update(env)
        settings = ArchiverSettings()
        hook_env = public_env(dict(os.environ))
        try:
            self.nc = await bus.connect(nats.url, "bench")
            self.js = self.nc.jetstream()
            await bus.ensure_streams(self.js)
            async with (
                ObjectStore(settings) as store,
                BrowserBroker(browser_limits(settings)) as broker,
            ):
                await store.ensure_bucket()
                await broker.warm()
                self.broker = broker
                cfg = WorkerConfig(
                    service="archiver", consumer=ARCHIVER_JOBS, plugins_dirs=[REPO_PLUGINS],
                    scratch_dir=self.work / "scratch", s3_prefix="archives/",
                    concurrency=self.contexts, skip_plugins=settings.media_plugins,
                    hook_env=hook_env, snapshot_session=snapshot_pages(broker, settings),
                )  # fmt: skip
                self.cfg = cfg
                stop = asyncio.Event()
                worker = asyncio.create_task(run_worker(cfg, self.js, store, stop))
                self.dones = await self.js.pull_subscribe("capture.done", stream=RESULTS.name)
                try:
                    yield self
                finally:
                    stop.set()
                    await worker
            await self.nc.close()
        finally:
            nats.child.stop()
            weed.child.stop()

    async def capture(self, urls: list[str], first_id: int) -> list[float]:
        """Publish one job per URL at once; wait for all done; per-job latencies."""
        sent: dict[int, float] = {}
        for i, url in enumerate(urls):
            job_id = first_id + i
            job = CaptureJob(job_id=job_id, link_id=job_id, snapshot_id=f"s{job_id}", url=url,
                             deadline=datetime.now(UTC) + timedelta(hours=1))  # fmt: skip
            sent[job_id] = time.perf_counter()
            await bus.publish(self.js, JOB_CAPTURE, job)
        latencies: dict[int, float] = {}
        while len(latencies) < len(urls):
            for msg in await bus.fetch(self.dones, 100, timeout=1.0):
                done = CaptureDone.model_validate_json(msg.data)
                if done.job_id in sent and done.job_id not in latencies:
                    latencies[done.job_id] = time.perf_counter() - sent[done.job_id]
                await msg.ack()
        return list(latencies.values())


class HookTimer:
    """Observer: each hook's time from its start to its end, as the runner stamps them on
    its final result (the runner streams no `started` record)."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}

    async def record(self, hook: HookSpec, record: HookRecord) -> None:
        pass

    async def hook_finished(self, hook: HookSpec, result: ArchiveResultRecord, out: Path) -> None:
        ok = result.status == "succeeded" and result.output_str == "evaluated"
        if ok and result.started_at is not None and result.ended_at is not None:
            self.ms[hook.key] = 1000 * (result.ended_at - result.started_at).total_seconds()


async def hook_overhead(broker: BrowserBroker, base: str, work: Path, n: int) -> dict[str, float]:
    """Median ms of a browser hook (spawn to record) and of the evaluate it asks for."""
    from services.archiver.egress import EgressPolicy
    from services.archiver.pageops import evaluate
    from services.archiver.pageserver import page_socket
    from services.archiver.pagesession import PageOptions, PageSession

    plugins = work / "hookbench"
    plugin = plugins / "evalbench"
    plugin.mkdir(parents=True)
    (plugin / "config.json").write_text('{"type": "object", "properties": {}}')
    for i in range(n):
        (plugin / f"on_Snapshot__5{i // 10}_e{i:03d}.py").write_text(EVAL_HOOK)
    options = PageOptions(user_agent="bench", policy=EgressPolicy(allow_private=True))
    out = work / "hook-snap"
    out.mkdir()
    timer = HookTimer()
    async with page_socket(broker, out, options) as env:
        spec = SnapshotSpec(snapshot_id="h", url=f"{base}/index.html", out_dir=out,
                            plugins_dirs=[plugins], env={**os.environ, **env})  # fmt: skip
        await run_snapshot(spec, timer)
    hook_ms = list(timer.ms.values())
    if len(hook_ms) < n:
        raise RuntimeError(f"only {len(hook_ms)} of {n} browser hooks succeeded")
    (work / "eval-snap").mkdir(exist_ok=True)  # a snapshot's folder, as the worker makes it
    session = PageSession(broker, work / "eval-snap", options)
    try:
        page = await session.page()
        await page.goto(f"{base}/index.html")
        evals = []
        for _ in range(n):
            t = time.perf_counter()
            await evaluate(session, {"expression": "1"})
            evals.append(1000 * (time.perf_counter() - t))
    finally:
        await session.close()
    return {
        "hooks": len(hook_ms),
        "hook_ms": statistics.median(hook_ms),
        "eval_ms": statistics.median(evals),
    }


def serve_site(site: Path, port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=site, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    for _ in range(100):
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("site server did not start")


def make_site(work: Path) -> tuple[str, list[str], str]:
    """Generate the site (base URL, page URLs, the generator's checksum line)."""
    port = 18765
    with contextlib.suppress(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        (port,) = free_ports(1)  # the usual port is taken
    base = f"http://127.0.0.1:{port}"
    gen = subprocess.run([sys.executable, str(GEN_SITE), str(work / "site"), "--base-url", base],
                         capture_output=True, text=True, check=True)  # fmt: skip
    urls = [u.strip() for u in (work / "site" / "urls.txt").read_text().split() if u.strip()]
    return base, urls, gen.stdout.strip().splitlines()[-1]


async def run(args: argparse.Namespace, work: Path, base: str, urls: list[str], sha: str) -> str:
    plugins = sorted(p.parent.name for p in REPO_PLUGINS.glob("*/config.json"))
    async with Archiver(work, args.contexts).running() as arch:
        await arch.capture(urls[:2], 1_000_000)  # warm-up (not counted)
        done = 2
        pss: dict[int, int] = {}

        def sample() -> None:
            if (done >= 50 and not pss) or done >= args.captures:
                pss.setdefault(done, proctree.pss_bytes(arch.own_pids()))

        cpu0 = tree_cpu_seconds(arch.own_pids())
        engines0 = tree_cpu_seconds(arch.engine_pids())
        t0 = time.perf_counter()
        batches, latencies = [], []
        for b in range(0, len(urls), BATCH):
            t = time.perf_counter()
            latencies += await arch.capture(urls[b : b + BATCH], 1 + b)
            batches.append((time.perf_counter() - t) / len(urls[b : b + BATCH]))
            done += len(urls[b : b + BATCH])
            sample()
        wall = time.perf_counter() - t0
        cpu = tree_cpu_seconds(arch.own_pids()) - cpu0
        engines = tree_cpu_seconds(arch.engine_pids()) - engines0
        while done < args.captures:
            chunk = min(BATCH, args.captures - done)
            await arch.capture([urls[(done + i) % len(urls)] for i in range(chunk)], done * 10)
            done += chunk
            sample()
        restarts = arch.broker.restarts
        overhead = await hook_overhead(arch.broker, base, work, args.hooks)
    load = os.getloadavg()
    body = [
        f"Site: `{GEN_SITE.name}` (60 pages, {sha}), served by "
        f"`python -m http.server` on 127.0.0.1. One archiver in the bench process, as "
        f"`python -m services.archiver` runs it: the capture worker on real NATS JetStream and "
        f"SeaweedFS (every artifact uploaded, every record published), one Chromium, "
        f"**{args.contexts} snapshots at once** (`ARCHIVER_CONCURRENCY`, each in its own "
        f"browser context). Capture set: every archiver plugin on this tree: "
        f"{', '.join(f'`{p}`' for p in plugins if p != 'media')}. Machine load average "
        f"during the run: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1/5/15 min; 2 cores "
        f"shared with other work, so absolute times are pessimistic).",
        "",
        "| measure | result |",
        "| --- | --- |",
        f"| s/page, median of {len(batches)} batches of {BATCH} (batch wall / pages; target "
        f"≤ 0.6, ArchiveBox 3.68) | **{statistics.median(batches):.3f}** (batches: "
        f"{', '.join(f'{b:.3f}' for b in batches)}) |",
        f"| pages/min | {60 * len(urls) / wall:.1f} |",
        f"| per-page latency, job published → done (median / max) | "
        f"{statistics.median(latencies):.2f} s / {max(latencies):.2f} s |",
        f"| CPU-s/page (archiver process tree: worker, hook host and hooks, Playwright driver, "
        f"Chromium) | {cpu / len(urls):.2f} |",
        f"| CPU-s/page of the engines on the same cores (NATS, SeaweedFS storing every "
        f"artifact) | {engines / len(urls):.2f} |",
        f"| browser hook, spawn → its record, one `evaluate` (median of {overhead['hooks']}) "
        f"| {overhead['hook_ms']:.1f} ms |",
        f"| the same `evaluate` inside the archiver (the browser's own work) | "
        f"{overhead['eval_ms']:.1f} ms |",
        f"| **per-hook overhead of a browser hook** (target ≤ 15 ms) | "
        f"**{overhead['hook_ms'] - overhead['eval_ms']:.1f} ms** |",
    ]
    if len(pss) == 2:
        first, last = min(pss), max(pss)
        change = 100 * (pss[last] - pss[first]) / pss[first]
        body.append(
            f"| PSS of archiver + Chromium after {first} / {last} captures (target: within "
            f"10 %) | {pss[first] / 2**20:.0f} MiB / {pss[last] / 2**20:.0f} MiB "
            f"(**{change:+.1f} %**; browser restarts: {restarts}) |"
        )
    return "\n".join(body)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--contexts", type=int, default=4)
    parser.add_argument("--captures", type=int, default=500)
    parser.add_argument("--hooks", type=int, default=40)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args()
    if not GEN_SITE.exists():
        print(f"skipped: {GEN_SITE} is absent")
        return 0
    work = Path(tempfile.mkdtemp(prefix="bench-capture-"))
    base, urls, sha = make_site(work)
    server = serve_site(work / "site", int(base.rsplit(":", 1)[1]))
    try:
        body = asyncio.run(run(args, work, base, urls, sha))
    finally:
        server.kill()
        server.wait()
    print(body)
    if not args.no_docs:
        cmd = f".venv/bin/python -m bench.bench_capture --contexts {args.contexts} "
        cmd += f"--captures {args.captures}"
        write_section(SECTION, cmd, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
