"""Hostile pages against the whole stack: memory, outcomes, and whether one bad host starves
the others.

Starts the whole stack as `dla up` does (real nats-server, SeaweedFS, every service) twice:
1. baseline: a fixture forum posts links to 8 ordinary pages on 127.0.0.3;
2. hostile: the same 8 pages plus, first in the feed, 9 hostile pages on 127.0.0.2 (a body
   dripping a byte a second, a short body, headers that never end, a server that never
   answers, a 150 MB page, a gzip bomb, a zip download, a zip served as text/html, a 64 MiB
   page whose whole parse would need gigabytes).
Per run it measures each ordinary link's latency (poll served -> its raw_response artifact
stored), samples the PSS of every process of the stack (all descendants of this process:
engines, services, hook host, hooks, Chromium) every 0.25 s (reporting, at the peak, how much
was Chromium's renderers and the rest of Chromium), and in the hostile run waits until every
hostile link's first attempt has ended, then reports each one's status and error code.
Default settings (FETCH_* timeouts, PER_DOMAIN_CONCURRENCY=1, ARCHIVER_CONCURRENCY=2,
WORKER_CONCURRENCY=4, HOOK_MEMORY_LIMIT_MB=512, ARCHIVER_LONG_JOB_SECONDS=20,
BROWSER_MAX_RENDERER_MB); --per-domain N runs it with PER_DOMAIN_CONCURRENCY=N (2 = as many as
the archiver's slots: the case where a stalling host could hold them all), and ARCHIVER_* and
BROWSER_* set in the environment reach the stack.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import tempfile
import time
import zlib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bench.psssampler import Sampler, sampling
from bench.report import write_section
from services.archiver.settings import ArchiverSettings
from services.supervisor.children import free_ports
from services.supervisor.stack import Stack
from testkit.forum import Post, posts_rss
from testkit.httpserver import FixtureServer, Reply
from testkit.rawserver import (
    RawServer,
    drip,
    endless_headers,
    head,
    reply,
    short_body,
    silent,
    stream,
)
from testkit.stack_env import own_engines_env

MB = 1024 * 1024
GOOD_PAGES = 8


def gzip_bomb(expanded: int) -> bytes:
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    start = z.compress(b"<!doctype html><html><body><p>")
    return start + b"".join(z.compress(b" " * MB) for _ in range(expanded // MB)) + z.flush()


def a_zip() -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("data.bin", os.urandom(5 * MB))
    return buf.getvalue()


def hostile_routes(s: RawServer) -> list[str]:
    zipped, bomb = a_zip(), gzip_bomb(1024 * MB)
    huge_parse = b"<!doctype html><title>Deep</title><body>" + b"<p>x</p>" * (8 * MB)
    s.routes.update(
        {
            "/drip": drip(1.0),
            "/short": short_body(1000, 100_000),
            "/endless-headers": endless_headers(0.5),
            "/silent": silent,
            "/huge": stream(
                head(Content_Type="text/html", Content_Length=150 * MB),
                b"<p>" + b"x" * 65533,
                150 * MB,
            ),
            "/bomb": reply(
                head(Content_Type="text/html", Content_Encoding="gzip", Content_Length=len(bomb))
                + bomb
            ),
            "/download.zip": reply(
                head(Content_Type="application/zip", Content_Length=len(zipped)) + zipped
            ),
            "/lying.html": reply(
                head(Content_Type="text/html", Content_Length=len(zipped)) + zipped
            ),
            "/deep-parse": reply(
                head(Content_Type="text/html", Content_Length=len(huge_parse)) + huge_parse
            ),
        }
    )
    return sorted(s.routes)


Hostile = list[tuple[str, str, str | None, str | None]]


def poll_db(db_path: Path) -> tuple[dict[str, float], Hostile]:
    """When each link's raw_response artifact was stored, and each hostile link's state."""
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as db:
        stored = {
            url: datetime.fromisoformat(created).timestamp()
            for url, created in db.execute(
                "SELECT l.canonical_url, min(a.created_at) FROM archive_artifacts a"
                " JOIN links l ON l.id = a.link_id WHERE a.kind = 'raw_response'"
                " GROUP BY l.id"
            )
        }
        hostile: Hostile = [
            (str(r[0]), str(r[1]), r[2], r[3])
            for r in db.execute(
                "SELECT canonical_url, status, last_error_code, retry_at FROM links"
                " WHERE canonical_url LIKE 'http://127.0.0.2%' ORDER BY id"
            )
        ]
    return stored, hostile


@dataclass
class RunResult:
    latencies: list[float]
    pss: Sampler
    """The stack's summed PSS over the run: its peak, parts and largest processes."""
    hostile: Hostile
    """(url, link status, last_error_code, retry_at) of each hostile link."""


def run(
    tmp: Path, good: list[str], bad: list[str], timeout: float, overrides: dict[str, str]
) -> RunResult:
    armed: list[float] = []
    served: list[float] = []
    with FixtureServer("127.0.0.1") as forum:
        links = [*bad, *good]
        posts = [
            Post(2000 + i, 70 + i, f'<p>See <a href="{u}">this</a>.</p>')
            for i, u in enumerate(links)
        ]
        full, empty = posts_rss(forum.base, posts), posts_rss(forum.base, [])

        def rss(_: object) -> Reply:
            if armed:
                if not served:
                    served.append(time.time())
                return Reply(full, headers={"Content-Type": "application/rss+xml"})
            return Reply(empty, headers={"Content-Type": "application/rss+xml"})

        forum.routes["/posts.rss"] = rss
        (web_port,) = free_ports(1)
        env = own_engines_env()
        env.update(
            RSS_URL=f"{forum.base}/posts.rss",
            POLL_INTERVAL_SECONDS="1",
            ALLOW_PRIVATE_TARGETS="true",
            ARCHIVE_MODE="all",
            WEB_PORT=str(web_port),
            LOG_LEVEL="WARNING",
        )
        env.update(overrides)
        stack = Stack(data_dir=tmp / "data", env=env)
        db_path = tmp / "data" / "archive.sqlite3"
        stored: dict[str, float] = {}
        hostile: Hostile = []
        with sampling() as sampler:
            try:
                stack.start_engines()
                stack.start_services()
                time.sleep(3)
                armed.append(time.time())
                deadline = time.time() + timeout
                while time.time() < deadline:
                    time.sleep(0.25)
                    if not db_path.exists():
                        continue
                    try:
                        found, hostile = poll_db(db_path)
                    except sqlite3.OperationalError:
                        continue  # not migrated yet
                    stored.update(found)
                    done_bad = sum(1 for h in hostile if h[1] != "pending")
                    if len([u for u in good if u in stored]) == len(good) and done_bad == len(bad):
                        break
            finally:
                stack.stop()
    lat = sorted(stored[u] - served[0] for u in good if u in stored and served)
    return RunResult(lat, sampler, hostile)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--timeout", type=float, default=480)
    parser.add_argument("--per-domain", type=int, default=1, help="PER_DOMAIN_CONCURRENCY")
    args = parser.parse_args()
    overrides = {k: v for k, v in os.environ.items() if k.startswith(("ARCHIVER_", "BROWSER_"))}
    if args.per_domain != 1:
        overrides["PER_DOMAIN_CONCURRENCY"] = str(args.per_domain)
    load_start = os.getloadavg()[0]
    with FixtureServer("127.0.0.3") as site, RawServer("127.0.0.2") as bad_site:
        for i in range(GOOD_PAGES):
            page = f"<!doctype html><title>Page {i}</title><p>{'text ' * 2000}</p>".encode()
            site.routes[f"/page{i}"] = Reply(page)
        good = [f"{site.base}/page{i}" for i in range(GOOD_PAGES)]
        bad = [f"{bad_site.base}{p}" for p in hostile_routes(bad_site)]
        base = run(
            Path(tempfile.mkdtemp(prefix="dla-bench-hostile-a-")), good, [], args.timeout, overrides
        )
        hostile = run(
            Path(tempfile.mkdtemp(prefix="dla-bench-hostile-b-")),
            good,
            bad,
            args.timeout,
            overrides,
        )
    if len(base.latencies) < GOOD_PAGES or len(hostile.latencies) < GOOD_PAGES:
        print(f"FAILED: good pages archived {len(base.latencies)} / {len(hostile.latencies)}")
        return 1
    med_a, med_b = statistics.median(base.latencies), statistics.median(hostile.latencies)
    a, b = base.pss, hostile.pss
    rows = "\n".join(
        f"| `{u.split('/', 3)[-1]}` | {st} | {code or ''} | {'yes' if retry else 'no'} |"
        for u, st, code, retry in hostile.hostile
    )
    body = (
        f"{GOOD_PAGES} ordinary pages on 127.0.0.3, alone and then posted after 9 hostile pages "
        "on 127.0.0.2 (same poll, hostile links first); whole stack on this machine, default "
        "settings (PER_DOMAIN_CONCURRENCY=1, WORKER_CONCURRENCY=4, ARCHIVER_CONCURRENCY=2, "
        "FETCH_IDLE_TIMEOUT=15, FETCH_HEADER_TIMEOUT=20, HOOK_MEMORY_LIMIT_MB=512, "
        "ARCHIVER_LONG_JOB_SECONDS=20, ARCHIVER_MAX_LONG_JOBS=2, "
        f"BROWSER_MAX_RENDERER_MB={ArchiverSettings.model_fields['browser_max_renderer_mb'].default})"
        + (
            f"; here {', '.join(f'{k}={v}' for k, v in sorted(overrides.items()))}"
            if overrides
            else ""
        )
        + ".\n\n"
        "| | ordinary pages alone | with the hostile host |\n|---|---|---|\n"
        f"| median poll → artifact stored (s) | {med_a:.2f} | {med_b:.2f} |\n"
        f"| max (s) | {base.latencies[-1]:.2f} | {hostile.latencies[-1]:.2f} |\n"
        f"| peak PSS of the stack (MB, {a.samples} / {b.samples} samples) | "
        f"{a.peak_kib / 1024:.0f} | {b.peak_kib / 1024:.0f} |\n"
        f"| at that peak: Chromium's renderers / rest of Chromium / the rest (MB) | "
        f"{a.parts_mb()} | {b.parts_mb()} |\n"
        f"| largest renderer seen (MB PSS) | {a.largest_renderer_kib / 1024:.0f} | "
        f"{b.largest_renderer_kib / 1024:.0f} |\n\n"
        f"Median latency difference: {100 * (med_b - med_a) / med_a:+.1f} % "
        "(target: within 20 %); peak PSS target: under 1500 MB. Load average of the machine "
        f"at the start and end: {load_start:.1f} / {os.getloadavg()[0]:.1f} (2 cores).\n\n"
        "Processes of 8 MB or more at the hostile run's peak (MB PSS): " + b.top_mb() + ".\n\n"
        "How each hostile link's first attempt ended (links table):\n\n"
        "| page | link status | last_error_code | retry scheduled |\n|---|---|---|---|\n"
        f"{rows}\n"
    )
    print(body)
    if not args.no_write:
        write_section(
            "Hostile pages: memory and a stalling host", "python -m bench.bench_hostile", body
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
