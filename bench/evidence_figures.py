"""bench_evidence's readings: the runs' CPU, the storage the evidence adds (from the writer's
database), `dla verify` timed on the captures, and the section written from them."""

from __future__ import annotations

import sqlite3
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from testkit.stack_env import own_engines_env

OTHER = "the capture's other files"
ADDED = ("browser WARC", "WACZ", "manifest", "timestamps")
"""The files evidence adds, as `category` names them."""
FEATURES = (
    ("browser WARC", "all", "no browser WARC"),
    ("WACZ", "all", "no WACZ"),
    ("manifest and its timestamps", "no WACZ", "no evidence"),
    ("**all three**", "all", "none"),
)
"""(feature, configuration with it, configuration without it)."""
MB = 1_000_000


@dataclass
class Run:
    """One stack run of one configuration."""

    config: str
    round: int
    cpu: float
    wall: float
    pages: int
    outcomes: dict[str, int] = field(default_factory=dict)

    @property
    def cpu_per_page(self) -> float:
        return self.cpu / self.pages


@dataclass
class Storage:
    """Bytes per category of every capture (snapshot) of a run."""

    pages: list[Counter[str]]


@dataclass
class Timed:
    """`dla verify` runs: seconds and bytes checked of each, and how many did not pass."""

    seconds: list[float] = field(default_factory=list)
    bytes: list[int] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


@dataclass
class Verified:
    startup: float | None = None
    """Median seconds of a `dla verify` that only starts (a file that is not there)."""
    files: Timed = field(default_factory=Timed)
    links: Timed = field(default_factory=Timed)


def category(plugin: str | None, kind: str) -> str:
    """Which of the added files an artifact is (or OTHER)."""
    if plugin == "traffic" and kind == "warc":
        return "browser WARC"
    if plugin == "evidence":
        return {"wacz": "WACZ", "manifest": "manifest", "timestamp": "timestamps"}.get(kind, kind)
    return OTHER


def storage(db_path: Path) -> Storage:
    """Each capture's bytes by category, from archive_artifacts."""
    pages: dict[str, Counter[str]] = defaultdict(Counter)
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10) as db:
        for snap, plugin, kind, size in db.execute(
            "SELECT snapshot_id, plugin, kind, bytes FROM archive_artifacts"
            " WHERE snapshot_id IS NOT NULL"
        ):
            pages[snap][category(plugin, kind)] += size
    return Storage(list(pages.values()))


def dla(args: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Seconds and result of one `dla` process."""
    cmd = [str(Path(sys.executable).parent / "dla"), *args]
    t = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    return time.perf_counter() - t, done


def timed(what: str, args: list[str], size: int, env: dict[str, str], into: Timed) -> None:
    seconds, done = dla(args, env)
    into.seconds.append(seconds)
    into.bytes.append(size)
    if done.returncode != 0:
        into.failed.append(what)
        if len(into.failed) == 1:
            print(f"  dla verify {what} exited {done.returncode}:\n{done.stdout}{done.stderr}")


def verify_all(db_path: Path, web: str, ca_file: Path, folder: Path) -> Verified:
    """`dla verify` on every capture with evidence: its WACZ (downloaded first, not timed),
    then its link through the web and S3."""
    folder.mkdir(parents=True, exist_ok=True)
    env = own_engines_env(WEB_URL=web, TSA_CA_FILE=str(ca_file), DATA_DIR=str(folder / "none"))
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10) as db:
        captures = db.execute("SELECT link_id, snapshot_id FROM evidence ORDER BY link_id")
        links: list[tuple[int, int]] = [
            (link_id, db.execute(
                "SELECT coalesce(sum(bytes), 0) FROM archive_artifacts WHERE snapshot_id = ?"
                " AND NOT (plugin = 'evidence' AND path LIKE 'timestamps/%.pem')", (snap,),
            ).fetchone()[0])
            for link_id, snap in captures.fetchall()
        ]  # fmt: skip
    files: list[Path] = []
    with httpx.Client(base_url=web, follow_redirects=True, timeout=60) as http:
        for link_id, _ in links:
            url = (http.get(f"/links/{link_id}.json").json().get("evidence") or {}).get("wacz_url")
            if url:
                files.append(folder / f"{link_id}.wacz")
                files[-1].write_bytes(http.get(url).content)
    v = Verified()
    v.startup = statistics.median(
        dla(["verify", str(folder / "absent.wacz")], env)[0] for _ in range(3)
    )
    for f in files:
        timed(f.name, ["verify", str(f)], f.stat().st_size, env, v.files)
    for link_id, size in links:
        timed(f"link {link_id}", ["verify", str(link_id)], size, env, v.links)
    return v


def _kib(n: float) -> str:
    return f"{n / 1024:,.1f} KiB"


def cpu_table(runs: list[Run], configs: list[str]) -> list[str]:
    by: dict[str, list[Run]] = {c: [r for r in runs if r.config == c] for c in configs}
    lines = [
        "| configuration | CPU-s/page (median) | each round | s/page (median) | captures |",
        "| --- | --- | --- | --- | --- |",
    ]
    for c, rs in by.items():
        if not rs:
            continue
        out: Counter[str] = Counter()
        for r in rs:
            out.update(r.outcomes)
        lines.append(
            f"| {c} | {statistics.median(r.cpu_per_page for r in rs):.3f} | "
            f"{', '.join(f'{r.cpu_per_page:.3f}' for r in rs)} | "
            f"{statistics.median(r.wall / r.pages for r in rs):.2f} | {dict(out)} |"
        )
    return lines


def added_table(runs: list[Run]) -> list[str]:
    cell = {(r.config, r.round): r.cpu_per_page for r in runs}
    rounds = sorted({r.round for r in runs})
    today = [cell[("none", n)] for n in rounds if ("none", n) in cell]
    base = statistics.median(today) if today else None
    lines = [
        "| feature | added CPU-s/page (median of the rounds' differences) | each round |"
        " % of today's CPU-s/page (`none`) |",
        "| --- | --- | --- | --- |",
    ]
    for name, with_, without in FEATURES:
        diffs = [cell[(with_, n)] - cell[(without, n)] for n in rounds
                 if (with_, n) in cell and (without, n) in cell]  # fmt: skip
        if not diffs:
            continue
        d = statistics.median(diffs)
        share = f"{100 * d / base:+.1f} %" if base else "-"
        target = " (target ≤ 10 %)" if name.startswith("**") else ""
        lines.append(f"| {name} | {d:+.3f} | {', '.join(f'{x:+.3f}' for x in diffs)} | "
                     f"{share}{target} |")  # fmt: skip
    return lines


def storage_table(s: Storage) -> list[str]:
    n = len(s.pages)
    other = sum(p[OTHER] for p in s.pages)
    lines = [
        f"| file | median per page | total ({n} pages) | of the capture's other files |",
        "| --- | --- | --- | --- |",
    ]
    for name in (*ADDED, "**added, all four**", OTHER):
        if name == "**added, all four**":
            per = [sum(p[a] for a in ADDED) for p in s.pages]
        else:
            per = [p[name] for p in s.pages]
        total = sum(per)
        share = f"{100 * total / other:.1f} %" if other and name != OTHER else "-"
        lines.append(f"| {name} | {_kib(statistics.median(per))} | {_kib(total)} | {share} |")
    return lines


def verify_table(v: Verified) -> list[str]:
    lines = [
        "| `dla verify` | runs | verified | MB checked | s per run (median) | MB/s "
        "| MB/s without the process start |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, t in (("`FILE.wacz` (offline)", v.files), ("`LINK_ID` (web API + S3)", v.links)):
        if not t.seconds:
            continue
        size, total = sum(t.bytes) / MB, sum(t.seconds)
        start = (v.startup or 0) * len(t.seconds)
        net = f"{size / (total - start):.1f}" if total > start else "-"
        lines.append(
            f"| {name} | {len(t.seconds)} | {len(t.seconds) - len(t.failed)} | {size:.1f} | "
            f"{statistics.median(t.seconds):.2f} | {size / total:.2f} | {net} |"
        )
    if v.startup is not None:
        lines.append(f"| the process start alone (a file that is not there) | 3 | - | - | "
                     f"{v.startup:.2f} | - | - |")  # fmt: skip
    return lines


def report(
    runs: list[Run], configs: list[str], stored: Storage | None, verified: Verified,
    load: tuple[float, float, float], site: str,
) -> str:  # fmt: skip
    """The section's body."""
    rounds = len({r.round for r in runs})
    pages = runs[0].pages if runs else 0
    body = [
        f"Site: `{site}` ({pages} pages, their images and stylesheet) on 127.0.0.2, one forum "
        f"post per page in one poll; the whole stack as `make up` runs it, fresh for each run, "
        f"default settings (`ARCHIVER_CONCURRENCY=2`) with `ARCHIVE_MODE=all` and a local RFC "
        f"3161 authority in `TSA_URLS` (testkit/tsa.py). {rounds} rounds of the five "
        f"configurations, their order rotated each round. CPU: every process of the stack "
        f"(services, hooks, Chromium, nats-server, SeaweedFS), from the idle stack until every "
        f"capture ended and, with evidence, every manifest and token was in. Machine load "
        f"average at the end: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1/5/15 min; 2 "
        f"cores shared with other work).",
        "",
        "Configurations: `all` = the defaults; `no browser WARC` = `TRAFFIC_ENABLED=false`; "
        "`no WACZ` = `WACZ_ENABLED=false`; `no evidence` = `EVIDENCE_ENABLED=false`; `none` = "
        "`TRAFFIC_ENABLED=false EVIDENCE_ENABLED=false` (the capture before evidence).",
        "",
        *cpu_table(runs, configs),
        "",
        "What each adds (the difference of two configurations in the same round):",
        "",
        *added_table(runs),
    ]
    if stored is not None and stored.pages:
        body += ["", "Storage the evidence adds (the last `all` run, from the writer's "
                 "`archive_artifacts`; the WACZ as built, each token a file of its own):", "",
                 *storage_table(stored)]  # fmt: skip
    if verified.files.seconds or verified.links.seconds:
        body += ["", "`dla verify` on the last `all` run's captures, one process at a time, "
                 "each file or link in its own process (a token checked in each):", "",
                 *verify_table(verified)]  # fmt: skip
    return "\n".join(body)
