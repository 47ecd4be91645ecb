"""Benchmark of the hook runner: per-hook overhead and the cost of supervising .bg hooks.

    .venv/bin/python -m bench.bench_runner [--hooks 200] [--bg 50] [--bg-seconds 10] [--no-docs]

1. Overhead per no-op hook, "spawn to record applied": from the hook's `started_at` (just
   before the runner resolves the config and spawns the process) to the moment the observer
   receives the record the hook printed (a Tag: the ArchiveResult a hook prints is not
   streamed, its final result carries it). Also "spawn to finished" (until hook_finished:
   exit reaped, pipes drained, final state computed).
   Python hooks forked from the pre-warmed host vs exec'd with a fresh interpreter, and a
   no-op sh hook (always exec'd).
2. CPU of the runner process (all its threads, from /proc/self/stat) while it supervises
   `--bg` sh hooks that sleep `--bg-seconds` each, as a share of one core.

Prints the results and replaces the "## Hook runner" section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.report import replace_section
from shared.hooks.host import close_shared_host, shared_host
from shared.hooks.records import ArchiveResultRecord, HookRecord, TagRecord
from shared.hooks.snapshot_runner import HookSpec, SnapshotSpec, run_snapshot

REPO = Path(__file__).resolve().parents[1]
SECTION = "## Hook runner"
TICKS = os.sysconf("SC_CLK_TCK")

PY_NOOP = 'from shared.hooks.records import emit\nemit({"type": "Tag", "name": "noop"})\n'
SH_NOOP = '#!/bin/sh\necho \'{"type": "Tag", "name": "noop"}\'\n'


class Timer:
    """Observer noting, per hook, when it started (its result's started_at, the wall clock),
    when its record arrived, when it finished; or, with `expect`, when `expect` hooks were
    reported started."""

    def __init__(self, expect: int = 0) -> None:
        self.started: dict[str, datetime] = {}
        self.recorded: dict[str, datetime] = {}
        self.finished: dict[str, datetime] = {}
        self.expect = expect
        self.reported_started = 0
        self.all_started = asyncio.Event()

    async def record(self, hook: HookSpec, record: HookRecord) -> None:
        if isinstance(record, TagRecord):
            self.recorded[hook.key] = datetime.now(UTC)
        elif isinstance(record, ArchiveResultRecord) and record.status == "started":
            self.reported_started += 1
            if self.reported_started == self.expect:
                self.all_started.set()

    async def hook_finished(self, hook: HookSpec, result: ArchiveResultRecord, out: Path) -> None:
        assert result.status == "succeeded" and result.started_at is not None, result
        self.finished[hook.key] = datetime.now(UTC)
        self.started[hook.key] = result.started_at


def ms_since(start: dict[str, datetime], end: dict[str, datetime]) -> list[float]:
    return [(end[k] - start[k]).total_seconds() * 1000 for k in start]


def make_plugins(root: Path, n: int, ext: str, body: str) -> Path:
    for i in range(n):
        plugin = root / f"p{i:03d}"
        plugin.mkdir(parents=True)
        hook = plugin / f"on_Snapshot__5{i % 10}_noop{i:03d}.{ext}"
        hook.write_text(body)
        hook.chmod(0o755)
    return root


def cpu_seconds() -> float:
    """utime + stime of this process (all threads)."""
    fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


async def overhead(
    tmp: Path, label: str, ext: str, body: str, n: int, host: bool
) -> dict[str, float]:
    plugins = make_plugins(tmp / label / "plugins", n, ext, body)
    timer = Timer()
    spec = SnapshotSpec(
        "bench", "https://example.org/", tmp / label / "out", [plugins], dict(os.environ)
    )
    await run_snapshot(spec, timer, python_host=host)
    to_record = ms_since(timer.started, timer.recorded)
    to_finish = ms_since(timer.started, timer.finished)
    return {
        "median": statistics.median(to_record),
        "p90": pct(to_record, 90),
        "finish_median": statistics.median(to_finish),
        "finish_p90": pct(to_finish, 90),
    }


async def supervise_bg(tmp: Path, n: int, seconds: float) -> dict[str, float]:
    plugins = tmp / "bg" / "plugins"
    body = f"#!/bin/sh\nsleep {seconds}\n" + SH_NOOP.split("\n", 1)[1]
    for i in range(n):
        plugin = plugins / f"bg{i:03d}"
        plugin.mkdir(parents=True)
        hook = plugin / f"on_Snapshot__6{i % 10}_sleep{i:03d}.bg.sh"
        hook.write_text(body)
        hook.chmod(0o755)
    timer = Timer(expect=n)
    out = tmp / "bg" / "out"
    spec = SnapshotSpec(  # each hook reported started as soon as it is spawned
        "bench", "https://example.org/", out, [plugins], dict(os.environ), started_after=0
    )
    cpu0, wall0 = cpu_seconds(), time.perf_counter()
    run = asyncio.create_task(run_snapshot(spec, timer))
    await timer.all_started.wait()
    cpu1, wall1 = cpu_seconds(), time.perf_counter()
    await asyncio.sleep(max(0.0, seconds - (wall1 - wall0) - 1.0))  # steady state
    cpu2, wall2 = cpu_seconds(), time.perf_counter()
    await run
    cpu3, wall3 = cpu_seconds(), time.perf_counter()
    return {
        "spawn_all_s": wall1 - wall0,
        "spawn_cpu_s": cpu1 - cpu0,
        "steady_pct": 100 * (cpu2 - cpu1) / (wall2 - wall1),
        "total_pct": 100 * (cpu3 - cpu0) / (wall3 - wall0),
        "wall_s": wall3 - wall0,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hooks", type=int, default=200, help="no-op hooks per variant")
    parser.add_argument("--bg", type=int, default=50, help="background hooks to supervise")
    parser.add_argument("--bg-seconds", type=float, default=10.0, help="how long each sleeps")
    parser.add_argument("--no-docs", action="store_true", help="do not update docs/benchmarks.md")
    args = parser.parse_args()
    if await shared_host() is None:  # started once per worker, not per hook
        raise SystemExit("hook host did not start")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        await overhead(tmp, "warmup", "py", PY_NOOP, 10, True)
        variants = [
            ("Python hook, forked from the pre-warmed host", "host", "py", PY_NOOP, True),
            ("Python hook, exec'd (fresh interpreter)", "exec", "py", PY_NOOP, False),
            ("sh hook, exec'd", "sh", "sh", SH_NOOP, True),
        ]
        rows = {
            name: await overhead(tmp, label, ext, body, args.hooks, host)
            for name, label, ext, body, host in variants
        }
        bg = await supervise_bg(tmp, args.bg, args.bg_seconds)
    close_shared_host()

    flags = " ".join(a for a in sys.argv[1:] if a != "--no-docs")
    command = f"`.venv/bin/python -m bench.bench_runner{' ' + flags if flags else ''}`"
    table = [
        "| no-op hook (foreground, one at a time) | spawn -> record applied, median | p90 "
        "| spawn -> finished, median | p90 |",
        "|---|---|---|---|---|",
    ]
    for name, r in rows.items():
        table.append(
            f"| {name} | **{r['median']:.1f} ms** | {r['p90']:.1f} ms "
            f"| {r['finish_median']:.1f} ms | {r['finish_p90']:.1f} ms |"
        )
    cpu, spawn_all, spawn_cpu = os.cpu_count(), bg["spawn_all_s"], bg["spawn_cpu_s"]
    text = f"""{SECTION}

Command: {command} — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, Python {platform.python_version()},
{cpu} CPUs, Linux {platform.release()}. {args.hooks} no-op hooks per row, each its own process.
"spawn -> record applied" runs from the hook's `started_at` (just before the runner resolves
the plugin config and spawns) to the observer receiving the record (a Tag) the hook printed;
"finished" adds exit, reaping, pipe drain and the final state. Target: ≤ 15 ms.

{chr(10).join(table)}

Supervising {args.bg} `.bg` sh hooks that each sleep {args.bg_seconds:g} s (target < 5 % of
one core): starting all {args.bg} took {spawn_all:.2f} s wall, {spawn_cpu:.2f} s CPU;
while they ran the runner process used **{bg["steady_pct"]:.2f} %** of one core; over the
whole run (spawn, supervise, reap, finish) {bg["total_pct"]:.2f} % ({bg["wall_s"]:.1f} s wall).
CPU is utime+stime of the runner process with all its threads (/proc/self/stat), so it
includes asyncio's child-watcher threads.

How the target is met: a Python hook is forked from a pre-warmed host process
(`shared/hooks/forkserver.py`) that has the interpreter, `shared.hooks.records` (pydantic)
and httpx loaded, its heap gc-frozen so children do not copy it; the child calls setsid, takes
the hook's stdout/stderr, cwd, env and argv, and runs the file with runpy, so each hook is
still its own process with its own exit status and signals. The exec'd Python row is what
every Python hook would cost without it (interpreter start plus importing pydantic).
"""
    print(text)
    if not args.no_docs:
        replace_section(SECTION.removeprefix("## "), text)


if __name__ == "__main__":
    asyncio.run(main())
