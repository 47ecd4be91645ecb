"""End-to-end fixtures: a fixture forum, an "outside web" host, and the whole stack."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from services.supervisor.children import free_ports
from services.supervisor.stack import Stack
from testkit.forum import Post, posts_rss
from testkit.httpserver import FixtureServer, Reply
from testkit.stack_env import ENGINES_GRACE_S, own_engines_env
from testkit.stack_report import database_counts, log_tails
from testkit.waiting import wait_for

E2E_TIMEOUT_S = 420
"""pytest-timeout's bound for an end-to-end test without its own: a whole stack started,
used and stopped (twice in some) took past the suite's 180 s at load 20. A bound for a hung
test, not a timing."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here) and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(E2E_TIMEOUT_S))


@dataclass
class Forum:
    """A fixture Discourse forum whose posts can change between polls."""

    server: FixtureServer
    posts: list[Post] = field(default_factory=list)

    def add(self, post_id: int, cooked: str) -> None:
        self.posts.append(Post(post_id, post_id, cooked))

    @property
    def rss_url(self) -> str:
        return f"{self.server.base}/posts.rss"


@contextmanager
def serving_outside_web() -> Iterator[FixtureServer]:
    """The web the forum links to, on 127.0.0.2 (another host than the forum)."""
    with FixtureServer("127.0.0.2") as web:
        yield web


@contextmanager
def serving_forum() -> Iterator[Forum]:
    """A fixture forum on 127.0.0.1 whose feed shows its posts of the moment."""
    with FixtureServer("127.0.0.1") as server:
        f = Forum(server)
        server.routes["/posts.rss"] = lambda _: Reply(
            posts_rss(server.base, f.posts), headers={"Content-Type": "application/rss+xml"}
        )
        yield f


@pytest.fixture
def outside_web() -> Iterator[FixtureServer]:
    """The web the forum links to, on 127.0.0.2 (another host than the forum)."""
    with serving_outside_web() as web:
        yield web


@pytest.fixture
def forum() -> Iterator[Forum]:
    with serving_forum() as f:
        yield f


@dataclass
class Running:
    """A started stack and how to reach it."""

    stack: Stack
    web: str
    index_error: str = ""
    """Why index.json last did not answer ('' when it did)."""
    http: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=5))
    """One client for the test's requests to the stack: `httpx.get` builds a client, and its
    TLS context, each call (~60 ms of CPU against ~3 ms), and the waits ask 4 times a second."""

    @property
    def db_path(self) -> Path:
        return self.stack.data_dir / "archive.sqlite3"

    def query(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        if not self.db_path.exists():
            return []
        with sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True) as db:
            return db.execute(sql, args).fetchall()

    def wait_for(self, predicate: Callable[[], Any], timeout: float, what: str) -> Any:
        """predicate()'s first true answer; fails with every service's log tail."""

        def tails() -> str:
            index = f"--- index.json: {self.index_error or 'answered'}"
            logs = log_tails((self.stack.data_dir / "logs").glob("*.log"))
            return "\n".join([index, database_counts(self.db_path), logs])

        return wait_for(predicate, timeout, what, interval=0.25, explain=tails)

    def index(self) -> list[dict[str, Any]]:
        """The web service's index.json links; [] when it did not answer (`index_error`
        says why, for a failed wait's report)."""
        try:
            links: list[dict[str, Any]] = self.http.get(f"{self.web}/index.json").json()["links"]
        except (httpx.HTTPError, ValueError, KeyError) as exc:
            self.index_error = f"{type(exc).__name__}: {exc}"
            return []
        self.index_error = ""
        return links

    def archived(self, url_suffix: str) -> dict[str, Any] | None:
        """The index entry of a link whose raw response is stored, if any."""
        for link in self.index():
            kinds = {a["kind"] for a in link["artifacts"]}
            if link["url"].endswith(url_suffix) and "raw_response" in kinds:
                return link
        return None

    def metrics_port(self, service: str) -> int:
        return int((self.stack.data_dir / "run" / f"{service}.port").read_text())


@pytest.fixture
def extra_env() -> dict[str, str]:
    """Settings a test module adds to the stack's (a module overrides this fixture)."""
    return {}


@pytest.fixture
def running(tmp_path: Path, forum: Forum, extra_env: dict[str, str]) -> Iterator[Running]:
    with stack_running(tmp_path / "data", forum, extra_env) as st:
        yield st


@contextmanager
def stack_running(data_dir: Path, forum: Forum, extra_env: dict[str, str]) -> Iterator[Running]:
    """The whole stack on `data_dir`, polling `forum`, with `extra_env` added to its
    settings; stopped when the block ends (a module shares one through its own fixture)."""
    (web_port,) = free_ports(1)
    env = own_engines_env()
    env.update(
        RSS_URL=forum.rss_url,
        POLL_INTERVAL_SECONDS="0.5",
        ALLOW_PRIVATE_TARGETS="true",
        ARCHIVE_MODE="all",
        WEB_PORT=str(web_port),
        JOB_RETRY_DELAY_SECONDS="1",
        DOMAIN_STATS_INTERVAL_SECONDS="1",
        LOG_LEVEL="INFO",
    )
    env.update(extra_env)
    st = Stack(data_dir=data_dir, env=env)
    try:
        st.start_engines()
        st.start_services()
        with running_on(st, f"http://127.0.0.1:{web_port}") as running:
            yield running
    finally:
        st.stop(engines_grace_s=ENGINES_GRACE_S)


@contextmanager
def running_on(st: Stack, web: str) -> Iterator[Running]:
    """A started stack and its web's base URL as a Running, its client closed at the end."""
    running = Running(st, web)
    try:
        yield running
    finally:
        running.http.close()
