"""Fixtures shared by the tests: real nats-server and SeaweedFS on 127.0.0.1 free ports
(stopped by PID), fixture HTTP sites, a writer harness on a fresh database."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import httpx
import pytest

from services.supervisor.infra import S3Credentials, start_nats, start_weed
from services.writer.db import open_db
from testkit.httpserver import FixtureServer, Route, Serve
from testkit.stack_env import ENGINES_GRACE_S
from testkit.writer_harness import Harness

REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO.parent / "shared" / "corpora"


@pytest.fixture
def corpora() -> Path:
    """../shared/corpora beside the checkout; skips the test when absent."""
    if not CORPORA.is_dir():
        pytest.skip("../shared/corpora not present")
    return CORPORA


@pytest.fixture
def nats_url(tmp_path: Path) -> Iterator[str]:
    """A fresh nats-server with JetStream for one test."""
    nats = start_nats(tmp_path / "nats", tmp_path / "nats.log")
    try:
        yield nats.url
    finally:
        nats.child.stop(ENGINES_GRACE_S)


@pytest.fixture(scope="module")
def module_nats_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A nats-server with JetStream shared by one module's tests (each test's subjects,
    streams or messages its own)."""
    folder = tmp_path_factory.mktemp("nats")
    nats = start_nats(folder / "nats", folder / "nats.log")
    try:
        yield nats.url
    finally:
        nats.child.stop(ENGINES_GRACE_S)


@pytest.fixture(scope="session")
def s3_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """One SeaweedFS for the session: the env a service needs to reach it."""
    data = tmp_path_factory.mktemp("s3")
    creds = S3Credentials("testkey", "test-secret-value-0123456789")
    weed = start_weed(data, "test-archive", creds, data / "weed.log")
    try:
        yield {
            "S3_ENDPOINT": weed.endpoint,
            "S3_BUCKET": "test-archive",
            "AWS_ACCESS_KEY_ID": creds.access_key,
            "AWS_SECRET_ACCESS_KEY": creds.secret_key,
        }
    finally:
        weed.child.stop(ENGINES_GRACE_S)


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    """One HTTP client for a test's polls: `httpx.get` builds a client, and its TLS context,
    every call (~60 ms of CPU against ~3 ms), and a live writer's waits poll 50 times a
    second."""
    with httpx.Client(timeout=5) as client:
        yield client


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "archive.sqlite3"


@pytest.fixture
def h(db_path: Path) -> Iterator[Harness]:
    """The writer's apply path on a fresh database (testkit/writer_harness.py)."""
    conn = open_db(db_path)
    try:
        yield Harness(conn)
    finally:
        conn.close()


@pytest.fixture
def serve() -> Iterator[Serve]:
    """serve(routes, host="127.0.0.1") -> a started fixture HTTP server with those routes,
    stopped when the test ends."""
    started: list[FixtureServer] = []

    def start(routes: Mapping[str, Route], host: str = "127.0.0.1") -> FixtureServer:
        server = FixtureServer(host).__enter__()
        started.append(server)
        server.routes.update(routes)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.__exit__(None, None, None)
