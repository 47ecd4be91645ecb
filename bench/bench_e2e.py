"""Poll-to-archived latency: from the poll that first sees a post to its link's artifact stored.

Starts the whole stack as `dla up` does (real nats-server, SeaweedFS, every service), serves
the shared 60-page benchmark site on 127.0.0.2, lets a fixture forum publish 20 posts (one
link each) at once, and measures, per link, the time from the poll that served them to the
writer recording the link's raw_response artifact.
"""

from __future__ import annotations

import argparse
import functools
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench.report import write_section
from services.supervisor.children import free_ports
from services.supervisor.stack import Stack
from testkit.forum import Post, posts_rss
from testkit.httpserver import FixtureServer, Reply
from testkit.stack_env import own_engines_env

REPO = Path(__file__).resolve().parents[1]
GEN_SITE = REPO.parent / "shared" / "bench" / "gen_site.py"
SITE_HOST, SITE_PORT = "127.0.0.2", 18765


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def serve_site(out: Path) -> ThreadingHTTPServer:
    base = f"http://{SITE_HOST}:{SITE_PORT}"
    subprocess.run([sys.executable, str(GEN_SITE), str(out), "--base-url", base], check=True,
                   capture_output=True)  # fmt: skip
    handler = functools.partial(QuietHandler, directory=str(out))
    httpd = ThreadingHTTPServer((SITE_HOST, SITE_PORT), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--links", type=int, default=20)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    if not GEN_SITE.exists():
        print(f"skipped: {GEN_SITE} not present")
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="dla-bench-e2e-"))
    site = serve_site(tmp / "site")
    urls = (tmp / "site" / "urls.txt").read_text().split()[: args.links]
    armed_at: list[float] = []
    empty = posts_rss("http://127.0.0.1", [])

    with FixtureServer("127.0.0.1") as forum:
        posts = [
            Post(1000 + i, 50 + i, f'<p>Read <a href="{u}">this page</a>.</p>')
            for i, u in enumerate(urls)
        ]
        full = posts_rss(forum.base, posts)
        served_full: list[float] = []

        def rss(_: object) -> Reply:
            if armed_at:
                if not served_full:
                    served_full.append(time.time())
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
            WORKER_CONCURRENCY="4",
            PER_DOMAIN_CONCURRENCY="4",
            ARCHIVER_CONCURRENCY="4",
            WEB_PORT=str(web_port),
            LOG_LEVEL="WARNING",
        )
        stack = Stack(data_dir=tmp / "data", env=env)
        try:
            stack.start_engines()
            stack.start_services()
            time.sleep(3)  # let every service connect and the first (empty) polls pass
            armed_at.append(time.time())
            db_path = tmp / "data" / "archive.sqlite3"
            deadline = time.time() + 300
            stored: dict[str, float] = {}
            while time.time() < deadline and len(stored) < len(urls):
                time.sleep(0.2)
                if not db_path.exists():
                    continue
                with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as db:
                    rows = db.execute(
                        "SELECT l.canonical_url, min(a.created_at) FROM archive_artifacts a "
                        "JOIN links l ON l.id = a.link_id WHERE a.kind = 'raw_response' "
                        "GROUP BY l.id"
                    ).fetchall()
                for url, created in rows:
                    stored[url] = datetime.fromisoformat(created).timestamp()
        finally:
            stack.stop()
            site.shutdown()
    if not served_full or len(stored) < len(urls):
        print(f"FAILED: {len(stored)}/{len(urls)} links archived")
        return 1
    lat = sorted(t - served_full[0] for t in stored.values())
    med, p90, worst = statistics.median(lat), lat[int(0.9 * (len(lat) - 1))], lat[-1]
    body = (
        f"{len(urls)} links (pages of the shared 60-page benchmark site on {SITE_HOST}), "
        "posted at once in one poll; whole stack on this machine (nats-server, SeaweedFS, "
        "writer, poller, 1 archiver, media, web); capture = the `fetch` plugin; "
        "WORKER_CONCURRENCY=4, PER_DOMAIN_CONCURRENCY=4, ARCHIVER_CONCURRENCY=4.\n\n"
        "| poll → artifact stored | seconds |\n|---|---|\n"
        f"| median | {med:.3f} |\n| p90 | {p90:.3f} |\n| max | {worst:.3f} |\n"
    )
    print(body)
    if not args.no_write:
        write_section("End to end: poll to artifact stored", "python -m bench.bench_e2e", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
