"""Captures through the whole stack, as `make up` runs it: real pages whose external
references cannot be reached, and the 60-page bench site under a per-domain limit.

Starts the stack as `dla up` does (nats-server, SeaweedFS, writer, poller, archiver, media,
web), lets a fixture forum on 127.0.0.1 publish one post per page at once, and waits until
every link's capture job has ended. Sites:

- `--site corpus`: the readability and extraction corpus pages (../shared/corpora, read in
  place), served on 127.0.0.2, their external scripts, styles, fonts and images left
  unreachable one of two ways: `--unreachable dns` keeps their real host names, which do not
  resolve here; `--unreachable silent` points every external host at one of 8 listeners on
  127.0.0.10-17 that accept a connection and never answer (plain HTTP and TLS alike).
- `--site bench`: the shared 60-page benchmark site (`../shared/bench/gen_site.py`), one host,
  so `--per-domain` (PER_DOMAIN_CONCURRENCY) bounds how many of its captures talk to it at
  once.

Reports s/page (first poll that served the posts -> last job ended, over the pages),
pages/min, the navigate hook's duration (median, p95, max, from the writer's
archive_results), navigate's error codes, how many captures ended partial or failed, and
CPU-s a page over every process of the stack (the bench process's own fixture servers
excluded).
"""

from __future__ import annotations

import argparse
import json
import mimetypes
import os
import re
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from bench.bench_capture import tree_cpu_seconds
from bench.extraction_corpus import CORPORA, article_benchmark, readability
from bench.psssampler import Sampler, sampling
from bench.report import write_section
from services.supervisor.children import free_ports
from services.supervisor.stack import Stack
from shared import processes
from shared.capture.settings import REPO_PLUGINS
from testkit.forum import Post, posts_rss
from testkit.httpserver import FixtureServer, Reply
from testkit.stack_env import own_engines_env

REPO = Path(__file__).resolve().parents[1]
GEN_SITE = REPO.parent / "shared" / "bench" / "gen_site.py"
SITE_HOST = "127.0.0.2"
SILENT_HOSTS = [f"127.0.0.{i}" for i in range(10, 18)]
EXTERNAL = re.compile(
    r"""(?<=["'(=])(https?:)?//([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)(:\d+)?(?=[/"')\s])"""
)
"""An absolute (or protocol-relative) URL's scheme, host and port inside markup."""
SECTION = {
    "corpus": "Real pages with unreachable externals, through the stack",
    "bench": "The 60-page site through the stack, per-domain limit",
}


@contextmanager
def silent_listeners() -> Iterator[dict[str, int]]:
    """One listener per SILENT_HOSTS address: accepts, reads, never answers."""
    stop = threading.Event()
    socks: dict[str, socket.socket] = {}
    held: list[socket.socket] = []
    for host in SILENT_HOSTS:
        s = socket.socket()
        s.bind((host, 0))
        s.listen(1024)
        s.settimeout(0.2)
        socks[host] = s

    def accept(s: socket.socket) -> None:
        while not stop.is_set():
            try:
                conn, _ = s.accept()
            except OSError:
                continue
            held.append(conn)

    threads = [threading.Thread(target=accept, args=(s,), daemon=True) for s in socks.values()]
    for t in threads:
        t.start()
    try:
        yield {host: s.getsockname()[1] for host, s in socks.items()}
    finally:
        stop.set()
        for t in threads:
            t.join(2)
        for s in [*socks.values(), *held]:
            s.close()


def point_at(html: str, ports: dict[str, int]) -> str:
    """html with every external host replaced by one of the silent listeners (a host always
    by the same one)."""
    hosts = list(ports)

    def sub(m: re.Match[str]) -> str:
        target = hosts[sum(m.group(2).encode()) % len(hosts)]
        return f"{m.group(1) or ''}//{target}:{ports[target]}"

    return EXTERNAL.sub(sub, html)


def corpus_pages(limit: int) -> list[tuple[str, str]]:
    """(name, html) of the corpus's saved real pages, readability's first."""
    pages = [(f"r-{d.name}", d.html) for d in readability() if EXTERNAL.search(d.html)]
    pages += [(f"a-{d.name}", d.html) for d in article_benchmark()]
    return pages[:limit]


def bench_site(work: Path, base: str) -> tuple[dict[str, Path], list[str]]:
    """The generated 60-page site: path -> file of everything it serves (pages, style sheet,
    images, icon), and the paths of its pages, in order."""
    out = work / "site"
    subprocess.run([sys.executable, str(GEN_SITE), str(out), "--base-url", base], check=True,
                   capture_output=True)  # fmt: skip
    pages = [u.removeprefix(base) for u in (out / "urls.txt").read_text().split()]
    files = {f"/{f.relative_to(out)}": f for f in out.rglob("*") if f.is_file()}
    return files, pages


def stack_cpu() -> float:
    """CPU-s of every process below this one (the stack's), reaped children included."""
    me = os.getpid()
    return tree_cpu_seconds([p for p in processes.descendants(me) if p != me])


def process_label(pid: int) -> str:
    """What a process of the stack is: the service (`services.writer`), the hook host,
    Chromium by its `--type`, or the executable's name."""
    argv = processes.cmdline(pid)
    for i, arg in enumerate(argv):
        if arg == "-m" and i + 1 < len(argv):
            return argv[i + 1]
    kind = next((a.split("=", 1)[1] for a in argv if a.startswith("--type=")), None)
    name = Path(argv[0]).name if argv else "?"
    return f"{name} {kind}" if kind else (name or "?")


def cpu_by_process() -> dict[int, tuple[str, float]]:
    """pid -> (label, CPU-s so far, reaped children included) of every process below this
    one."""
    me = os.getpid()
    return {p: (process_label(p), tree_cpu_seconds([p])) for p in processes.descendants(me)
            if p != me}  # fmt: skip


def cpu_spent(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]
              ) -> dict[str, float]:  # fmt: skip
    """CPU-s each kind of process spent between two `cpu_by_process` readings (a process that
    ended between them is not counted: Chromium's renderers of closed pages, mostly)."""
    spent: dict[str, float] = {}
    for pid, (label, cpu) in after.items():
        spent[label] = spent.get(label, 0.0) + cpu - before.get(pid, (label, 0.0))[1]
    return spent


def wait_started(quiet: float = 0.1, most: float = 60.0) -> float:
    """Wait until the stack has started: at least 3 s (every service connected, the first
    empty polls passed) and then two 1-s windows in a row in which the stack used less than
    `quiet` CPU-s (imports, migrations, the browser's and the hook host's start are over), at
    most `most` s. Starting takes ~7 CPU-s, more than 3 s on 2 cores: measured from a fixed
    3 s, what was left of it counted against the first pages. Returns the seconds waited."""
    t0 = time.monotonic()
    time.sleep(3)
    calm, last = 0, stack_cpu()
    while calm < 2 and time.monotonic() - t0 < most:
        time.sleep(1)
        now = stack_cpu()
        calm = calm + 1 if now - last < quiet else 0
        last = now
    return time.monotonic() - t0


def bench_env(forum: FixtureServer, **extra: str) -> dict[str, str]:
    """The stack's environment for a benchmark: engines of its own, the fixture forum polled
    every second, loopback targets allowed, every link archived, a free web port."""
    (web_port,) = free_ports(1)
    env = own_engines_env()
    env.update(
        RSS_URL=f"{forum.base}/posts.rss", POLL_INTERVAL_SECONDS="1",
        ALLOW_PRIVATE_TARGETS="true", ARCHIVE_MODE="all", WEB_PORT=str(web_port),
        LOG_LEVEL="WARNING", **extra,
    )  # fmt: skip
    return env


def wait_answers(stack: Stack, most: float = 300.0) -> float:
    """Wait until every service's /healthz answers 200 (the web's on WEB_PORT); returns the
    monotonic time it did (or gave up)."""
    deadline = time.monotonic() + most
    pending = {name: targets[0] for name, targets in stack.metrics_targets.items()}
    while pending and time.monotonic() < deadline:
        for name, target in list(pending.items()):
            try:
                with urllib.request.urlopen(f"http://{target}/healthz", timeout=2) as r:
                    if r.status == 200:
                        del pending[name]
            except OSError:
                pass
        time.sleep(0.1)
    return time.monotonic()


NOOP_CONFIG = {"title": "noop", "description": "Does nothing (a benchmark's plugin).",
               "type": "object", "properties": {}}  # fmt: skip
NOOP_HOOK = (
    "from shared.hooks.records import emit\n"
    'emit({"type": "ArchiveResult", "status": "succeeded", "output_str": "noop"})\n'
)


def noop_plugins(folder: Path, n: int) -> Path:
    """A plugins folder: the repo's plugins (linked) and `n` no-op plugins at step 6
    (`noop01/on_Snapshot__60_noop01.py`, ...), between the page's captures and traffic."""
    folder.mkdir(parents=True)
    for plugin in REPO_PLUGINS.iterdir():
        if plugin.is_dir() and not plugin.name.startswith((".", "_")):
            (folder / plugin.name).symlink_to(plugin)
    for i in range(1, n + 1):
        name = f"noop{i:02d}"
        (folder / name).mkdir()
        (folder / name / "config.json").write_text(json.dumps({**NOOP_CONFIG, "title": name}))
        (folder / name / f"on_Snapshot__60_{name}.py").write_text(NOOP_HOOK)
    return folder


def noop_overhead(db_path: Path) -> list[float]:
    """Per snapshot, the time the no-op hooks took (from the end of the hook before the
    first to the start of the hook after the last, so spawn, records and uploads count) per
    no-op hook, in ms."""
    per: list[float] = []
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10) as db:
        snaps = db.execute("SELECT DISTINCT snapshot_id FROM archive_results").fetchall()
        for (snap,) in snaps:
            rows = db.execute(
                "SELECT plugin, started_at, ended_at FROM archive_results WHERE snapshot_id = ?"
                " AND started_at IS NOT NULL AND ended_at IS NOT NULL ORDER BY started_at",
                (snap,),
            ).fetchall()
            idx = [i for i, (p, _, _) in enumerate(rows) if p.startswith("noop")]
            if not idx or idx[0] == 0 or idx[-1] + 1 >= len(rows):
                continue
            before, after = rows[idx[0] - 1][2], rows[idx[-1] + 1][1]
            span = (datetime.fromisoformat(after) - datetime.fromisoformat(before)).total_seconds()
            per.append(1000 * span / len(idx))
    return sorted(per)


def wait_done(db_path: Path, jobs: int, timeout: float) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        time.sleep(0.5)
        if not db_path.exists():
            continue
        try:
            with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10) as db:
                ended = db.execute(
                    "SELECT count(*) FROM archive_jobs WHERE kind = 'capture'"
                    " AND status NOT IN ('queued', 'running')"
                ).fetchone()[0]
        except sqlite3.OperationalError:  # the writer is still creating its schema
            continue
        if ended >= jobs:
            return True
    return False


@dataclass
class Measured:
    """What the writer's database says of the run."""

    wall: float
    nav: list[float]
    codes: Counter[str]
    outcomes: Counter[str]
    answered: float = 0.0
    """Seconds from launching the services to every /healthz answering 200."""
    noop_ms: list[float] = field(default_factory=list)
    """Per snapshot, ms a no-op plugin cost (`--noop-plugins`)."""
    cpu_by: dict[str, float] = field(default_factory=dict)
    """CPU-s of the run by kind of process (those alive at its end)."""
    pss: Sampler = field(default_factory=Sampler)
    """The stack's summed PSS while the pages were captured, its peak."""


def measure(db_path: Path, served_at: float) -> Measured:
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10) as db:
        last = db.execute(
            "SELECT max(finished_at) FROM archive_jobs WHERE kind = 'capture'"
        ).fetchone()[0]
        nav = db.execute(
            "SELECT started_at, ended_at, error_code FROM archive_results WHERE plugin ="
            " 'navigate' AND started_at IS NOT NULL AND ended_at IS NOT NULL"
        ).fetchall()
        outcomes = Counter(
            o for (o,) in db.execute("SELECT outcome FROM snapshots WHERE outcome IS NOT NULL")
        )
    durations = sorted(
        (datetime.fromisoformat(e) - datetime.fromisoformat(s)).total_seconds() for s, e, _ in nav
    )
    return Measured(
        datetime.fromisoformat(last).timestamp() - served_at,
        durations,
        Counter(c or "ok" for _, _, c in nav),
        outcomes,
    )


RUNS = (
    ("--site", "corpus", "--unreachable", "dns"),
    ("--site", "corpus", "--unreachable", "silent"),
    ("--site", "bench", "--per-domain", "1"),
    ("--site", "bench", "--per-domain", "2"),
)
"""What `make bench` runs (no --site given): every figure, one stack after the other."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--site", choices=("corpus", "bench"), default=None)
    parser.add_argument("--unreachable", choices=("dns", "silent"), default="dns")
    parser.add_argument("--pages", type=int, default=88, help="corpus pages (bench: 60 max)")
    parser.add_argument("--per-domain", type=int, default=1, help="PER_DOMAIN_CONCURRENCY")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--keep", action="store_true", help="keep the run's data folder")
    parser.add_argument("--noop-plugins", type=int, default=0,
                        help="add this many no-op plugins (step 6) to the capture")  # fmt: skip
    args = parser.parse_args()
    if not CORPORA.is_dir() or not GEN_SITE.exists():
        print("skipped: ../shared/corpora or ../shared/bench not present")
        return 0
    if args.site is None:
        extra = sys.argv[1:]
        return max(subprocess.call([sys.executable, "-m", "bench.bench_stack", *run, *extra])
                   for run in RUNS)  # fmt: skip
    return run_one(args)


def run_one(args: argparse.Namespace) -> int:
    """One stack, one site: capture every page, report."""
    work = Path(tempfile.mkdtemp(prefix="dla-bench-stack-"))
    with ExitStack() as stack_cm:
        if not args.keep:  # each run's stack leaves 70-200 MB (SQLite, JetStream, S3)
            stack_cm.callback(shutil.rmtree, work, ignore_errors=True)
        site = stack_cm.enter_context(FixtureServer(SITE_HOST))
        if args.site == "corpus":
            ports = stack_cm.enter_context(silent_listeners())
            site_pages = []
            for name, html in corpus_pages(args.pages):
                body = point_at(html, ports) if args.unreachable == "silent" else html
                site.routes[f"/{name}/"] = Reply(body.encode(), headers={
                    "Content-Type": "text/html; charset=utf-8"})  # fmt: skip
                site_pages.append(f"/{name}/")
        else:
            files, pages = bench_site(work, site.base)
            for path, file in files.items():
                kind = mimetypes.guess_type(path)[0] or "application/octet-stream"
                site.routes[path] = Reply(file.read_bytes(), headers={"Content-Type": kind})
            site_pages = pages[: args.pages]
        urls = [f"{site.base}{path}" for path in site_pages]
        forum = stack_cm.enter_context(FixtureServer("127.0.0.1"))
        posts = [Post(1000 + i, 50 + i, f'<p>Read <a href="{u}">this</a>.</p>')
                 for i, u in enumerate(urls)]  # fmt: skip
        full, empty = posts_rss(forum.base, posts), posts_rss(forum.base, [])
        served: list[float] = []
        armed = threading.Event()

        def rss(_: object) -> Reply:
            if armed.is_set() and not served:
                served.append(time.time())
            body = full if armed.is_set() else empty
            return Reply(body, headers={"Content-Type": "application/rss+xml"})

        forum.routes["/posts.rss"] = rss
        env = bench_env(forum, PER_DOMAIN_CONCURRENCY=str(args.per_domain))
        if args.noop_plugins:
            env["PLUGINS_DIR"] = str(noop_plugins(work / "plugins", args.noop_plugins))
        stack = Stack(data_dir=work / "data", env=env)
        db_path = work / "data" / "archive.sqlite3"
        try:
            stack.start_engines()
            launched = time.monotonic()
            stack.start_services()
            answered = wait_answers(stack) - launched
            started = wait_started()
            cpu0, by0 = stack_cpu(), cpu_by_process()
            with sampling() as pss:
                armed.set()
                ok = wait_done(db_path, len(urls), args.timeout)
            cpu, by = stack_cpu() - cpu0, cpu_spent(by0, cpu_by_process())
        finally:
            stack.stop()
        if not ok or not served:
            print(f"FAILED: not every capture ended within {args.timeout:g} s")
            return 1
        m = measure(db_path, served[0])
        m.answered = answered
        m.cpu_by = by
        m.pss = pss
        m.noop_ms = noop_overhead(db_path) if args.noop_plugins else []
    return report(args, len(urls), m, cpu, started)


def report(args: argparse.Namespace, pages: int, m: Measured, cpu: float, started: float) -> int:
    nav, wall = m.nav, m.wall
    p95 = nav[min(len(nav) - 1, round(0.95 * (len(nav) - 1)))]
    if args.site == "corpus":
        what = (f"{pages} saved real pages of the readability and extraction corpora on "
                f"{SITE_HOST}, external references unreachable: "
                + ("their real names, which do not resolve here" if args.unreachable == "dns"
                   else "every external host pointed at a listener on 127.0.0.10-17 that "
                   "accepts and never answers"))  # fmt: skip
        command = f"python -m bench.bench_stack --site corpus --unreachable {args.unreachable}"
    else:
        what = f"{pages} pages of the shared 60-page bench site, one host ({SITE_HOST})"
        command = f"python -m bench.bench_stack --site bench --per-domain {args.per_domain}"
    noop = ""
    if args.noop_plugins:
        command += f" --noop-plugins {args.noop_plugins}"
        what += f", {args.noop_plugins} no-op plugins added at step 6"
        med = statistics.median(m.noop_ms) if m.noop_ms else float("nan")
        noop = f"| a no-op plugin's cost a page, median over the snapshots (ms) | {med:.1f} |\n"
    body = (
        f"{what}; one post per page in one poll; whole stack as `make up` runs it, default "
        f"settings but PER_DOMAIN_CONCURRENCY={args.per_domain}; the posts appear once the "
        f"stack has started ({started:.0f} s after launch, CPU quiet: its start is not "
        "counted).\n\n"
        "| measure | result |\n|---|---|\n"
        f"| s/page (poll -> last job ended, / pages) | {wall / pages:.3f} |\n"
        f"| pages/min | {60 * pages / wall:.1f} |\n"
        f"| navigate, median / p95 / max (s) | {statistics.median(nav):.2f} / {p95:.2f} /"
        f" {nav[-1]:.2f} |\n"
        f"| navigate outcomes | {dict(sorted(m.codes.items()))} |\n"
        f"| snapshot outcomes | {dict(sorted(m.outcomes.items()))} |\n"
        f"| CPU-s/page, every process of the stack | {cpu / pages:.2f} |\n"
        f"| peak PSS of the stack while capturing (MB, {m.pss.samples} samples) |"
        f" {m.pss.peak_kib / 1024:.0f} |\n"
        f"| at that peak: Chromium's renderers / rest of Chromium / the rest (MB) |"
        f" {m.pss.parts_mb()} |\n"
        f"| services launched -> every /healthz answers 200 (s) | {m.answered:.1f} |\n"
        f"{noop}"
        "\nCPU-s a page by kind of process (those alive at the end; a closed page's "
        "renderer is not counted): "
        + ", ".join(
            f"{k} {v / pages:.3f}" for k, v in sorted(m.cpu_by.items(), key=lambda kv: -kv[1])[:12]
        )
        + f".\n\nProcesses of 8 MB or more at the peak (MB PSS): {m.pss.top_mb()}.\n"
    )
    print(body)
    if not args.no_write:
        title = SECTION[args.site]
        if args.site == "corpus":
            title += f" ({args.unreachable})"
        else:
            title += f" {args.per_domain}"
        if args.noop_plugins:
            title += f", {args.noop_plugins} no-op plugins"
        write_section(title, command, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
