"""The web app over a database the writer filled; S3 and NATS are down on purpose."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from services.supervisor.children import free_ports
from services.web.app import create_app
from services.web.settings import WebSettings
from services.writer.db import open_db
from shared.hooks.records import ArtifactRecord, MetadataRecord
from testkit.writer_harness import Harness, event, occ, post

URL = "https://www.reddit.com/r/a/comments/x1/t/"


def settings(tmp_path: Path, **extra: object) -> WebSettings:
    dead_s3, dead_nats = free_ports(2)
    return WebSettings.model_validate(
        {
            "data_dir": tmp_path,
            "s3_endpoint": f"http://127.0.0.1:{dead_s3}",
            "nats_url": f"nats://127.0.0.1:{dead_nats}",
            "aws_access_key_id": "k",
            "aws_secret_access_key": "s",
            **extra,
        }
    )


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    conn = open_db(tmp_path / "archive.sqlite3")
    h = Harness(conn)
    h.apply(post("g1", occ(URL)))
    (job,) = h.dispatch()
    row = h.job(job.job_id)
    artifact = ArtifactRecord(
        plugin="fetch", kind="raw_response", path="body.html",
        s3_key="archives/1/s/fetch/body.html", content_type="text/html", bytes=5, sha256="ab" * 32,
    )  # fmt: skip
    title = MetadataRecord(title="<script>alert(1)</script> A thread")
    h.apply(event(row, 0, artifact), event(row, 1, title))
    conn.close()
    return tmp_path


@pytest.fixture
def client(filled: Path) -> Iterator[TestClient]:
    app = create_app(settings(filled, s3_public_endpoint="https://files.example.org"))
    with TestClient(app) as c:
        yield c


def test_index_json_lists_links_with_artifacts(client: TestClient) -> None:
    (link,) = client.get("/index.json").json()["links"]
    assert link["url"] == "https://old.reddit.com/r/a/comments/x1/t/"
    assert link["domain"] == "old.reddit.com" and link["status"]
    (a,) = link["artifacts"]
    assert {k: a[k] for k in ("kind", "sha256", "bytes", "content_type")} == {
        "kind": "raw_response", "sha256": "ab" * 32, "bytes": 5, "content_type": "text/html",
    }  # fmt: skip
    assert a["url"] == f"/artifacts/{a['id']}"


def test_html_page_escapes_archived_text_and_sets_a_strict_csp(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert "<script>alert(1)</script>" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; A thread" in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"


def test_artifacts_redirect_to_a_signed_url_on_the_public_endpoint(client: TestClient) -> None:
    (link,) = client.get("/index.json").json()["links"]
    resp = client.get(link["artifacts"][0]["url"], follow_redirects=False)
    assert resp.status_code == 302
    location = resp.headers["location"]
    assert location.startswith("https://files.example.org/")
    assert "archives/1/s/fetch/body.html" in location and "X-Amz-Signature=" in location
    assert client.get("/artifacts/999", follow_redirects=False).status_code == 404


def test_submit_validates_and_never_captures_in_process(client: TestClient) -> None:
    for bad in ("javascript:alert(1)", "ftp://x/", "not a url", "http://" + "a" * 5000):
        assert client.post("/submit", json={"url": bad}).status_code == 400, bad
    # NATS is down: the request is refused clearly rather than captured here.
    resp = client.post("/submit", json={"url": "https://x.com/a/status/1"})
    assert resp.status_code == 503


def test_health_says_what_is_down(client: TestClient) -> None:
    resp = client.get("/healthz")
    assert resp.status_code == 503
    assert resp.json() | {"nats": False, "s3": False, "db": True} == resp.json()
    assert client.get("/metrics").status_code == 200


def test_before_the_writer_created_the_database(tmp_path: Path) -> None:
    with TestClient(create_app(settings(tmp_path))) as c:
        assert c.get("/index.json").json() == {"links": []}
        assert "Nothing archived yet" in c.get("/").text
