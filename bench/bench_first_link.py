"""First-link latency: from the poll that first serves a new post to its links `archived`,
with where the time goes.

Starts the stack as `dla up` does (nats-server, SeaweedFS, writer, poller, archiver, media,
web; default settings: the full capture set and the evidence on), serves the shared 60-page
bench site on 127.0.0.2, waits until the stack has started (CPU quiet), then publishes posts
one at a time on a fixture forum: each post's links are all archived (their capture jobs
ended) before the next post appears. Per post it reports the time from the poll that first
served it to its last capture job's end, and a breakdown of each link's capture from the
writer's own timestamps:

- poll -> post stored: the poller fetched, parsed and published; the writer stored the post;
- -> job queued: the writer decided to archive the link and queued its capture job;
- -> job sent: the writer's scheduler published the job to the archiver's queue;
- -> first hook: the archiver took the job, claimed the host's slot, opened a page;
- hooks: first hook started -> last hook ended (with each hook's own time);
- -> archived: the last hook's end to the job's end as the writer recorded it (evidence,
  WACZ, the last uploads, the writer's apply).

`--links N` puts N pages in each post (the issue's "eight article links of one post").
"""

from __future__ import annotations

import argparse
import mimetypes
import shutil
import sqlite3
import statistics
import tempfile
import threading
import time
from collections import defaultdict
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from bench.bench_stack import GEN_SITE, SITE_HOST, bench_env, bench_site, wait_started
from bench.report import write_section
from services.supervisor.stack import Stack
from testkit.forum import Post, posts_rss
from testkit.httpserver import FixtureServer, Reply

STAGES = ("poll -> post stored", "-> job queued", "-> job sent", "-> first hook", "hooks",
          "-> archived")  # fmt: skip


@dataclass
class Capture:
    """One link's capture, in seconds from the poll that served its post."""

    stages: dict[str, float]
    hooks: dict[str, float] = field(default_factory=dict)


def _t(text: str | None) -> float:
    if text is None:
        raise ValueError("a timestamp is missing")
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def read_post(db: sqlite3.Connection, guid: str, served: float) -> list[Capture]:
    """The captures of the post `guid`'s links, each broken into STAGES."""
    rows = db.execute(
        "SELECT p.first_seen_at, j.enqueued_at, j.published_at, j.finished_at, j.snapshot_id"
        " FROM discourse_posts p JOIN link_occurrences o ON o.discourse_post_id = p.id"
        " JOIN archive_jobs j ON j.link_id = o.link_id AND j.kind = 'capture'"
        " WHERE p.guid = ?",
        (guid,),
    ).fetchall()
    out = []
    for stored, queued, sent, finished, snapshot in rows:
        hooks = db.execute(
            "SELECT hook, started_at, ended_at FROM archive_results WHERE snapshot_id = ?"
            " AND started_at IS NOT NULL AND ended_at IS NOT NULL ORDER BY started_at",
            (snapshot,),
        ).fetchall()
        first = min(_t(s) for _, s, _ in hooks)
        last = max(_t(e) for _, _, e in hooks)
        marks = [served, _t(stored), _t(queued), _t(sent or queued), first, last, _t(finished)]
        stages = {name: marks[i + 1] - marks[i] for i, name in enumerate(STAGES)}
        stages["total"] = marks[-1] - served
        out.append(Capture(stages, {h: _t(e) - _t(s) for h, s, e in hooks}))
    return out


def wait_archived(db_path: Path, guid: str, links: int, timeout: float) -> bool:
    """True once the post `guid` has `links` capture jobs, all ended."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        time.sleep(0.05)
        try:
            with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10) as db:
                ended = db.execute(
                    "SELECT count(*) FROM discourse_posts p JOIN link_occurrences o"
                    " ON o.discourse_post_id = p.id JOIN archive_jobs j ON j.link_id ="
                    " o.link_id AND j.kind = 'capture' WHERE p.guid = ?"
                    " AND j.status NOT IN ('queued', 'running')",
                    (guid,),
                ).fetchone()[0]
        except sqlite3.OperationalError:
            continue
        if ended >= links:
            return True
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--posts", type=int, default=10, help="posts, one after the other")
    parser.add_argument("--links", type=int, default=1, help="links in each post")
    parser.add_argument("--timeout", type=float, default=300, help="per post")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    if not GEN_SITE.exists():
        print(f"skipped: {GEN_SITE} not present")
        return 0
    if args.posts * args.links > 60:
        parser.error("the bench site has 60 pages: posts x links must be at most 60")
    work = Path(tempfile.mkdtemp(prefix="dla-bench-first-"))
    totals: list[float] = []
    captures: list[Capture] = []
    with ExitStack() as cm:
        cm.callback(shutil.rmtree, work, ignore_errors=True)
        site = cm.enter_context(FixtureServer(SITE_HOST))
        files, pages = bench_site(work, site.base)
        for path, file in files.items():
            kind = mimetypes.guess_type(path)[0] or "application/octet-stream"
            site.routes[path] = Reply(file.read_bytes(), headers={"Content-Type": kind})
        forum = cm.enter_context(FixtureServer("127.0.0.1"))
        shown: list[Post] = []
        served: dict[int, float] = {}
        lock = threading.Lock()

        def rss(_: object) -> Reply:
            with lock:
                posts = list(shown)
                now = time.time()
                for p in posts:
                    served.setdefault(p.post_id, now)
            return Reply(posts_rss(forum.base, posts), headers={
                "Content-Type": "application/rss+xml"})  # fmt: skip

        forum.routes["/posts.rss"] = rss
        env = bench_env(forum)
        stack = Stack(data_dir=work / "data", env=env)
        db_path = work / "data" / "archive.sqlite3"
        try:
            stack.start_engines()
            stack.start_services()
            wait_started()
            for i in range(args.posts):
                urls = pages[i * args.links : (i + 1) * args.links]
                cooked = "".join(f'<p>Read <a href="{site.base}{u}">this</a>.</p>' for u in urls)
                post = Post(2000 + i, 70 + i, cooked)
                with lock:
                    shown.append(post)
                guid = f"forum.test-post-{post.post_id}"
                if not wait_archived(db_path, guid, args.links, args.timeout):
                    print(f"FAILED: post {i + 1} not archived within {args.timeout:g} s")
                    return 1
                with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as db:
                    caps = read_post(db, guid, served[post.post_id])
                totals.append(max(c.stages["total"] for c in caps))
                captures += caps
                time.sleep(1)  # let the post's last uploads and liveness settle
        finally:
            stack.stop()
    return report(args, totals, captures)


def report(args: argparse.Namespace, totals: list[float], caps: list[Capture]) -> int:
    def med(values: list[float]) -> str:
        return f"{statistics.median(values):.2f}"

    hooks: dict[str, list[float]] = defaultdict(list)
    for c in caps:
        for h, d in c.hooks.items():
            hooks[h].append(d)
    rows = "".join(f"| {s} | {med([c.stages[s] for c in caps])} |\n" for s in STAGES)
    hook_rows = "".join(
        f"| {h} | {med(d)} |\n"
        for h, d in sorted(hooks.items(), key=lambda kv: -statistics.median(kv[1]))
    )
    body = (
        f"{args.posts} posts of {args.links} link(s) each (pages of the shared bench site on "
        f"{SITE_HOST}), one post at a time, each once the one before was archived; whole "
        "stack as `make up` runs it, default settings (full capture set, evidence on), "
        "POLL_INTERVAL_SECONDS=1; timed from the poll that first served the post.\n\n"
        "| measure | seconds |\n|---|---|\n"
        f"| poll -> every link of the post archived, median | **{med(totals)}** |\n"
        f"| the same, min / max | {min(totals):.2f} / {max(totals):.2f} |\n"
        f"{rows}\n"
        "| hook (median of its runs) | seconds |\n|---|---|\n"
        f"{hook_rows}"
    )
    print(body)
    if not args.no_write:
        command = f"python -m bench.bench_first_link --posts {args.posts} --links {args.links}"
        write_section(f"First link of a new post ({args.links} a post)", command, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
