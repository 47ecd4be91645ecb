"""End to end, every hop real: fixture forum -> poller -> NATS -> writer -> archiver -> S3 -> web.

The forum lives on 127.0.0.1 and the "outside web" it links to on 127.0.0.2, so the forum's
own links are not archive targets while the article is.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import boto3
import httpx
import pytest
from botocore.config import Config

from testkit.httpserver import FixtureServer, Reply
from tests.e2e.conftest import Forum, Running

pytestmark = pytest.mark.integration

ARTICLE = b"<html><head><title>A deletable thing</title></head><body><p>Hi.</p></body></html>"


def s3_client(running: Running):  # type: ignore[no-untyped-def]
    env = running.stack.env
    return boto3.client(
        "s3",
        endpoint_url=env["S3_ENDPOINT"],
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
        region_name="us-east-1",
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}),
    )


def test_a_posted_link_is_archived_end_to_end(
    forum: Forum, outside_web: FixtureServer, running: Running
) -> None:
    outside_web.routes["/article.html"] = Reply(ARTICLE, headers={"Content-Type": "text/html"})
    forum.add(
        101,
        f'<p>Look at <a href="{outside_web.base}/article.html?utm_source=x">this</a> '
        f'and <a href="/t/other-topic/7">our own topic</a>.</p>',
    )
    link = running.wait_for(lambda: running.archived("/article.html"), 90, "the link archived")
    assert link["url"] == f"{outside_web.base}/article.html", "tracking parameter stripped"
    assert link["domain"] == "127.0.0.2"
    raw = next(a for a in link["artifacts"] if a["kind"] == "raw_response")

    # The page's bytes are in S3 with the recorded sha256.
    ((key,),) = running.query("SELECT s3_key FROM archive_artifacts WHERE id = ?", raw["id"])
    body = s3_client(running).get_object(Bucket="link-archive", Key=key)["Body"].read()
    assert body == ARTICLE
    assert hashlib.sha256(body).hexdigest() == raw["sha256"] == hashlib.sha256(ARTICLE).hexdigest()
    assert raw["bytes"] == len(ARTICLE)

    # The rows exist: the post, the link, its occurrence, a job; the forum's link is no target.
    assert running.query("SELECT count(*) FROM discourse_posts") == [(1,)]
    occurrences = running.query(
        "SELECT o.in_quote FROM link_occurrences o JOIN links l ON l.id = o.link_id "
        "WHERE l.domain = '127.0.0.2'"
    )
    assert occurrences == [(0,)]
    assert running.query("SELECT count(*) FROM archive_jobs")[0][0] >= 1
    assert running.query("SELECT count(*) FROM links WHERE domain = '127.0.0.1'") == [(0,)]

    # The web page lists the link, and the artifact link redirects to S3 (another origin).
    page = running.http.get(running.web, timeout=5)
    assert page.status_code == 200 and link["url"] in page.text
    redirect = running.http.get(f"{running.web}{raw['url']}", timeout=5)
    assert redirect.status_code == 302
    assert redirect.headers["location"].startswith(running.stack.env["S3_ENDPOINT"])

    # Submission to the public archives is off by default: nothing planned, nothing shown.
    # (The e2e of submissions turned on is tests/e2e/test_public_archives.py.)
    data = running.http.get(f"{running.web}/links/{link['id']}.json", timeout=5).json()
    assert data["external_archives"] == []
    assert running.query("SELECT count(*) FROM external_archives") == [(0,)]
    assert (
        "Public archives"
        not in running.http.get(f"{running.web}/links/{link['id']}", timeout=5).text
    )

    # Every service answers /healthz and /metrics.
    assert running.http.get(f"{running.web}/healthz", timeout=5).status_code == 200
    assert running.http.get(f"{running.web}/metrics", timeout=5).status_code == 200
    for name in ("poller", "writer", "archiver", "media"):
        base = f"http://127.0.0.1:{running.metrics_port(name)}"
        assert httpx.get(f"{base}/healthz", timeout=5).status_code == 200, name
        assert "dla_" in httpx.get(f"{base}/metrics", timeout=5).text, name

    # Only the writer holds the database open for writing.
    writers = processes_writing(running.db_path)
    writer_pid = running.stack.procs["writer"].child.pid
    assert writers == {writer_pid}, f"write handles held by {writers}, writer is {writer_pid}"


def processes_writing(db: Path) -> set[int]:
    """PIDs of processes holding the database file open with write access (from /proc)."""
    pids: set[int] = set()
    target = str(db.resolve())
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                if os.readlink(fd) != target:
                    continue
                info = (proc / "fdinfo" / fd.name).read_text().splitlines()
                flags = int(next(ln.split()[1] for ln in info if ln.startswith("flags:")), 8)
                if flags & (os.O_WRONLY | os.O_RDWR):
                    pids.add(int(proc.name))
        except (OSError, StopIteration):
            continue
    return pids
