"""Fault-injection harness: a fixture forum, the whole stack supervised as `dla up` does,
faults at chosen moments, and the accounting afterwards (lost, duplicated, recovery).

Used by tests/chaos (small counts in `make test`, the issue's counts in `make chaos`).
Figures are printed and, when CHAOS_FIGURES names a file, appended to it as JSON lines for
tests/chaos/report.py to write into docs/reliability.md.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import statistics
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from services.supervisor.children import free_ports
from services.supervisor.stack import SERVICES, Stack
from shared.s3 import ObjectStore
from shared.settings import CommonSettings
from testkit.forum import Post, posts_rss
from testkit.httpserver import FixtureServer, Reply
from testkit.live_writer import writer_idle
from testkit.stack_env import ENGINES_GRACE_S, own_engines_env
from testkit.waiting import poll

REPO = Path(__file__).resolve().parents[1]
KEPT_PLUGINS = frozenset({"fetch", "metadata"})
"""Plugins the fault runs capture with (fast, no browser): what is counted is bookkeeping."""
FEED_PAGE = 20
"""Posts shown by the fixture feed (Discourse shows the latest few): older ones are only
reachable through /posts.json, so a poller that was down must backfill."""


heavy = pytest.mark.skipif(
    os.environ.get("CHAOS") != "1", reason="heavy fault run: `make chaos` (CHAOS=1)"
)
"""Marks a fault run too long for `make test`."""


def count(name: str, default: int) -> int:
    """A count from the environment (CHAOS_LINKS, CHAOS_KILLS ...), else default."""
    return int(os.environ.get(name, default))


def record(name: str, figures: Mapping[str, Any]) -> None:
    """Print the figures of one fault run and append them to $CHAOS_FIGURES if set."""
    line = json.dumps({"name": name, **figures}, sort_keys=True)
    print(f"\nCHAOS {line}", flush=True)
    target = os.environ.get("CHAOS_FIGURES")
    if target:
        with Path(target).open("a") as fh:
            fh.write(line + "\n")


@dataclass
class Site:
    """A forum on 127.0.0.1 whose posts each link to pages of an outside web on 127.0.0.2."""

    forum: FixtureServer
    web: FixtureServer
    links_per_post: int = 2
    posts: list[Post] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.forum.routes["/posts.rss"] = lambda _: Reply(
            posts_rss(self.forum.base, self.latest(FEED_PAGE)),
            headers={"Content-Type": "application/rss+xml"},
        )
        self.forum.routes["/posts.json"] = self.posts_json
        self.web.routes["/p"] = lambda h: Reply(
            f"<html><head><title>{h.path}</title></head><body><p>{h.path}</p></body></html>".encode()
        )

    @property
    def rss_url(self) -> str:
        return f"{self.forum.base}/posts.rss"

    def latest(self, n: int, before: int | None = None) -> list[Post]:
        with self.lock:
            shown = [p for p in self.posts if before is None or p.post_id < before]
        return sorted(shown, key=lambda p: p.post_id, reverse=True)[:n]

    def posts_json(self, handler: Any) -> Reply:
        query = handler.path.partition("?")[2]
        params = dict(kv.partition("=")[::2] for kv in query.split("&") if kv)
        before = int(params["before"]) if params.get("before", "").isdigit() else None
        page = [
            {
                "id": p.post_id,
                "cooked": p.cooked,
                "post_url": f"/t/topic/{p.topic_id}#post_{p.post_number}",
                "username": p.author,
                "topic_title": p.title,
            }
            for p in self.latest(FEED_PAGE, before)
        ]
        return Reply(json.dumps({"latest_posts": page}).encode(), headers={})

    def link(self, n: int) -> str:
        return f"{self.web.base}/p?n={n}"

    def add_posts(self, count: int) -> None:
        """Publish `count` new posts (each with links_per_post new links)."""
        with self.lock:
            start = len(self.posts)
            for i in range(start + 1, start + count + 1):
                first = (i - 1) * self.links_per_post
                cooked = "".join(
                    f'<p><a href="{self.link(first + k)}">page {first + k}</a></p>'
                    for k in range(self.links_per_post)
                )
                self.posts.append(Post(i, i, cooked))

    def expected(self) -> tuple[set[str], set[str], set[tuple[str, str]]]:
        """Guids, link URLs and (guid, link) occurrences the archive must hold."""
        guids, links, occurrences = set(), set(), set()
        for p in self.posts:
            guid = f"forum.test-post-{p.post_id}"
            guids.add(guid)
            first = (p.post_id - 1) * self.links_per_post
            for k in range(self.links_per_post):
                links.add(self.link(first + k))
                occurrences.add((guid, self.link(first + k)))
        return guids, links, occurrences


@contextmanager
def site(links_per_post: int = 2) -> Iterator[Site]:
    """A fixture forum and its outside web, stopped afterwards."""
    with FixtureServer("127.0.0.1") as forum, FixtureServer("127.0.0.2") as web:
        yield Site(forum, web, links_per_post)


def fault_env(site: Site, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a fault run: production defaults except what a fixture needs."""
    env = own_engines_env()
    (web_port,) = free_ports(1)
    env.update(
        RSS_URL=site.rss_url,
        POLL_INTERVAL_SECONDS="1",
        ALLOW_PRIVATE_TARGETS="true",
        ARCHIVE_MODE="all",
        PER_DOMAIN_CONCURRENCY="4",
        WEB_PORT=str(web_port),
        JOB_RETRY_DELAY_SECONDS="2",
        BACKUP_INTERVAL_SECONDS="0",
        LOG_LEVEL="INFO",
    )
    for folder in (REPO / "plugins").iterdir():
        if (
            folder.is_dir()
            and folder.name not in KEPT_PLUGINS
            and (folder / "config.json").exists()
        ):
            env[f"{folder.name.upper()}_ENABLED"] = "false"
    env.update(extra or {})
    return env


class Run:
    """The stack of one fault run, supervised in a thread as `dla up` does."""

    def __init__(self, data_dir: Path, env: dict[str, str], services: tuple[str, ...] = SERVICES):
        self.stack = Stack(data_dir=data_dir, env=env, services=services)
        self.web_port = int(env["WEB_PORT"])
        self._stop = threading.Event()
        self._supervisor = threading.Thread(target=self._supervise, daemon=True)
        self.paused = threading.Event()

    def _supervise(self) -> None:
        while not self._stop.wait(0.2):
            if not self.paused.is_set():
                self.stack.supervise_once()

    def __enter__(self) -> Run:
        try:
            self.stack.start_engines()
            self.stack.start_services()
        except BaseException:
            self.stack.stop(engines_grace_s=ENGINES_GRACE_S)
            raise
        self._supervisor.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._supervisor.is_alive():
            self._supervisor.join(5)
        self.stack.stop(engines_grace_s=ENGINES_GRACE_S)

    @property
    def db_path(self) -> Path:
        return self.stack.data_dir / "archive.sqlite3"

    def query(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        if not self.db_path.exists():
            return []
        try:
            with sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, timeout=5) as db:
                return db.execute(sql, args).fetchall()
        except sqlite3.OperationalError:
            return []  # not migrated yet, or locked for a moment

    def health_url(self, service: str) -> str:
        if service == "web":
            return f"http://127.0.0.1:{self.web_port}/healthz"
        port = int((self.stack.data_dir / "run" / f"{service}.port").read_text())
        return f"http://127.0.0.1:{port}/healthz"

    def healthy(self, service: str) -> bool:
        try:
            return httpx.get(self.health_url(service), timeout=2).status_code == 200
        except (httpx.HTTPError, OSError, ValueError):
            return False

    def pid(self, service: str) -> int:
        return self.stack.procs[service].child.pid

    def kill9(self, service: str) -> float:
        """SIGKILL the service's process group (the service and its hooks); returns when."""
        child = self.stack.procs[service].child
        child.signal(9)
        if child.proc is not None:
            child.proc.wait(10)
        return time.monotonic()

    def recovered(self, service: str, old_pid: int, timeout: float = 180) -> float | None:
        """Seconds until a new process of service answers /healthz 200 (None: never)."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            proc = self.stack.procs[service].child
            if proc.alive() and proc.pid != old_pid and self.healthy(service):
                return time.monotonic() - started
            time.sleep(0.1)
        return None

    def wait(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Whether predicate() came true within timeout (the figures count misses)."""
        return bool(poll(predicate, timeout, interval=0.5))

    def settled(self, expected_links: int) -> bool:
        """Every expected link has a job, no job is queued or running, and the writer has
        applied every message: a message a killed writer held unacknowledged comes back only
        after WRITER_ACK_WAIT_SECONDS, possibly after its job's end was applied (an artifact
        of a finished job then still on its way is not lost)."""
        rows = self.query(
            "SELECT (SELECT count(*) FROM links),"
            " (SELECT count(*) FROM archive_jobs WHERE status IN ('queued', 'running')),"
            " (SELECT count(DISTINCT link_id) FROM archive_jobs"
            "  WHERE status IN ('succeeded', 'failed'))"
        )
        return (
            bool(rows)
            and rows[0][0] >= expected_links
            and rows[0][1] == 0
            and (rows[0][2] >= expected_links)
            and self.writer_idle()
        )

    def writer_idle(self) -> bool:
        """The writer's consumers have nothing pending or unacknowledged."""
        try:
            return asyncio.run(writer_idle(self.stack.env["NATS_URL"]))
        except Exception:  # NATS restarting or unreachable: not settled yet
            return False

    def s3_keys(self) -> set[str]:
        settings = CommonSettings.model_validate(
            {
                k.lower(): v
                for k, v in self.stack.env.items()
                if k.lower() in CommonSettings.model_fields
            }
        )

        async def keys() -> set[str]:
            async with ObjectStore(settings) as store:
                return set(await store.list_keys(settings.s3_prefix))

        return asyncio.run(keys())

    def tail_logs(self, chars: int = 3000) -> str:
        logs = self.stack.data_dir / "logs"
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-chars:]}"
            for p in sorted(logs.glob("*.log"))
        )


def accounting(run: Run, site: Site) -> dict[str, dict[str, int]]:
    """What was lost and what was duplicated, per kind of record, against the site."""
    guids, links, occurrences = site.expected()
    posts = [r[0] for r in run.query("SELECT guid FROM discourse_posts")]
    urls = {r[0]: r[1] for r in run.query("SELECT id, original_url FROM links")}
    occ = run.query(
        "SELECT p.guid, o.link_id FROM link_occurrences o"
        " JOIN discourse_posts p ON p.id = o.discourse_post_id"
    )
    found_occ = [(g, urls.get(lid, "")) for g, lid in occ]
    jobs = run.query(
        "SELECT link_id, status FROM archive_jobs WHERE kind = 'capture'"
        " AND status IN ('queued', 'running', 'succeeded', 'failed')"
    )
    jobs_per_link: dict[int, int] = {}
    for link_id, _ in jobs:
        jobs_per_link[link_id] = jobs_per_link.get(link_id, 0) + 1
    unfinished = sum(1 for _, status in jobs if status in ("queued", "running"))
    artifacts = run.query("SELECT link_id, kind, s3_key, attempt, run FROM archive_artifacts")
    raw = [a for a in artifacts if a[1] == "raw_response"]
    raw_per_link: dict[int, int] = {}
    raw_per_try: dict[tuple[int, int, int], int] = {}
    for link_id, _, _, attempt, run_no in raw:
        raw_per_link[link_id] = raw_per_link.get(link_id, 0) + 1
        try_ = (link_id, attempt or 0, run_no or 0)
        raw_per_try[try_] = raw_per_try.get(try_, 0) + 1
    stored = run.s3_keys()
    return {
        "lost": {
            "posts": len(guids - set(posts)),
            "links": len(links - set(urls.values())),
            "occurrences": len(occurrences - set(found_occ)),
            "jobs": sum(1 for lid in urls if lid not in jobs_per_link),
            "unfinished_jobs": unfinished,
            "artifacts": sum(1 for lid in urls if lid not in raw_per_link)
            + sum(1 for a in artifacts if a[2] not in stored),
        },
        "duplicated": {
            "posts": len(posts) - len(set(posts)),
            "links": len(urls) - len(set(urls.values())),
            "occurrences": len(found_occ) - len(set(found_occ)),
            "jobs": sum(n - 1 for n in jobs_per_link.values()),
            # one try's page kept twice; a job run again (S3 or NATS failed mid-run) or a
            # retried attempt fetches the page again, in a folder of its own: `recaptured`
            "artifacts": sum(n - 1 for n in raw_per_try.values()),
        },
        "recaptured": {"links": sum(1 for n in raw_per_link.values() if n > 1)},
        "extra": {
            "posts": len(set(posts) - guids),
            "links": len(set(urls.values()) - links),
        },
    }


def summary(seconds: list[float]) -> dict[str, float | None]:
    """Median and max of recovery times (None when there were none)."""
    if not seconds:
        return {"median_s": None, "max_s": None}
    return {
        "median_s": round(statistics.median(seconds), 1),
        "max_s": round(max(seconds), 1),
    }
