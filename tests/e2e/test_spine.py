"""End to end, every hop real: fixture forum -> poller -> NATS -> writer -> archiver -> S3 -> web.

The forum lives on 127.0.0.1 and the "outside web" it links to on 127.0.0.2, so the forum's
own links are not archive targets while the article is.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest
from botocore.config import Config

from services.supervisor.procs import free_ports
from services.supervisor.stack import Stack
from tests.support.forum import Post, posts_rss
from tests.support.httpserver import FixtureServer, Reply

pytestmark = pytest.mark.integration

ARTICLE = (
    b"<html><head><title>A deletable thing</title></head><body><p>Hello archive.</p></body></html>"
)


@pytest.fixture
def outside_web() -> Iterator[FixtureServer]:
    with FixtureServer("127.0.0.2") as web:
        web.routes["/article.html"] = Reply(
            ARTICLE, headers={"Content-Type": "text/html; charset=utf-8"}
        )
        yield web


@pytest.fixture
def forum(outside_web: FixtureServer) -> Iterator[FixtureServer]:
    with FixtureServer("127.0.0.1") as forum:
        cooked = (
            f'<p>Look at <a href="{outside_web.base}/article.html?utm_source=x">this</a> '
            f'and <a href="/t/other-topic/7">our own topic</a>.</p>'
        )
        forum.routes["/posts.rss"] = Reply(
            posts_rss(forum.base, [Post(101, 5, cooked)]),
            headers={"Content-Type": "application/rss+xml"},
        )
        yield forum


@pytest.fixture
def stack(tmp_path: Path, forum: FixtureServer) -> Iterator[tuple[Stack, str]]:
    (web_port,) = free_ports(1)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "S3_", "AWS_"))}
    env.update(
        RSS_URL=f"{forum.base}/posts.rss",
        POLL_INTERVAL_SECONDS="1",
        ALLOW_PRIVATE_TARGETS="true",
        ARCHIVE_MODE="all",
        WEB_PORT=str(web_port),
        LOG_LEVEL="INFO",
    )
    st = Stack(data_dir=tmp_path / "data", env=env)
    try:
        st.start_engines()
        st.start_services()
        yield st, f"http://127.0.0.1:{web_port}"
    finally:
        st.stop()


def wait_for(predicate: Any, timeout: float, what: str, logs: Path) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.25)
    tails = "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(logs.glob("*.log")))
    pytest.fail(f"timed out waiting for {what}\n{tails}")


def test_a_posted_link_is_archived_end_to_end(stack: tuple[Stack, str]) -> None:
    st, web = stack
    logs = st.data_dir / "logs"

    def archived_link() -> dict[str, Any] | None:
        try:
            links = httpx.get(f"{web}/index.json", timeout=2).json()["links"]
        except (httpx.HTTPError, ValueError, KeyError):
            return None
        for link in links:
            kinds = {a["kind"] for a in link["artifacts"]}
            if "raw_response" in kinds and "headers" in kinds:
                return link
        return None

    link = wait_for(archived_link, 90, "the link's artifacts to be listed", logs)
    assert link["url"].endswith("/article.html"), "tracking parameter stripped, page kept"
    assert link["domain"] == "127.0.0.2"
    raw = next(a for a in link["artifacts"] if a["kind"] == "raw_response")

    # The page's bytes are in S3 with the recorded sha256.
    s3 = boto3.client(
        "s3",
        endpoint_url=st.env["S3_ENDPOINT"],
        aws_access_key_id=st.env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=st.env["AWS_SECRET_ACCESS_KEY"],
        region_name="us-east-1",
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}),
    )
    db = sqlite3.connect(f"file:{st.data_dir / 'archive.sqlite3'}?mode=ro", uri=True)
    (key,) = db.execute(
        "SELECT s3_key FROM archive_artifacts WHERE id = ?", (raw["id"],)
    ).fetchone()
    body = s3.get_object(Bucket="link-archive", Key=key)["Body"].read()
    assert body == ARTICLE
    assert hashlib.sha256(body).hexdigest() == raw["sha256"] == hashlib.sha256(ARTICLE).hexdigest()
    assert raw["bytes"] == len(ARTICLE)

    # The rows exist: the post, the link, its occurrence, a job.
    assert db.execute("SELECT count(*) FROM discourse_posts").fetchone()[0] == 1
    (n_occ,) = db.execute(
        "SELECT count(*) FROM link_occurrences o JOIN links l ON l.id = o.link_id "
        "WHERE l.domain = '127.0.0.2'"
    ).fetchone()
    assert n_occ == 1
    assert db.execute("SELECT count(*) FROM archive_jobs").fetchone()[0] >= 1
    forum_links = db.execute("SELECT count(*) FROM links WHERE domain = '127.0.0.1'").fetchone()
    assert forum_links[0] == 0, "the forum's own topic link is not an archive target"

    # The web page lists the link, and the artifact link redirects to S3.
    page = httpx.get(web, timeout=5)
    assert page.status_code == 200 and link["url"] in page.text
    redirect = httpx.get(f"{web}{raw['url']}", timeout=5)
    assert redirect.status_code == 302 and redirect.headers["location"].startswith(
        st.env["S3_ENDPOINT"]
    )

    # Every service answers /healthz and /metrics.
    assert httpx.get(f"{web}/healthz", timeout=5).status_code == 200
    assert httpx.get(f"{web}/metrics", timeout=5).status_code == 200
    for name in ("poller", "writer", "archiver", "media"):
        port = int((st.data_dir / "run" / f"{name}.port").read_text())
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200, name
        assert httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).status_code == 200, name

    # Only the writer holds the database open for writing.
    writers = processes_writing(st.data_dir / "archive.sqlite3")
    writer_pid = st.procs["writer"].child.pid
    assert writers == {writer_pid}, f"write handles held by {writers}, writer is {writer_pid}"


def processes_writing(db: Path) -> set[int]:
    """PIDs of the stack's processes that hold the database file open with write access."""
    pids: set[int] = set()
    target = str(db.resolve())
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                if os.readlink(fd) != target:
                    continue
                flags = int(
                    next(
                        line.split()[1]
                        for line in (proc / "fdinfo" / fd.name).read_text().splitlines()
                        if line.startswith("flags:")
                    ),
                    8,
                )
                if flags & (os.O_WRONLY | os.O_RDWR):
                    pids.add(int(proc.name))
        except (OSError, StopIteration):
            continue
    return pids
