"""The fetch hook as a real subprocess against fixture servers on 127.0.0.1."""

from __future__ import annotations

import gzip
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator

from shared.hooks.records import SnapshotRecord
from testkit.httpserver import FixtureServer, Reply

RunFetch = Callable[..., Any]
"""The run_fetch fixture (conftest.py): run_fetch(url, **env) -> a finished run."""
PAGE = b"<!doctype html><title>hi</title><p>hi</p>"


@pytest.fixture
def site() -> Iterator[FixtureServer]:
    with FixtureServer() as s:
        s.routes["/page"] = Reply(PAGE, headers={"Content-Type": "text/html", "X-A": "1"})
        s.routes["/gz"] = Reply(
            gzip.compress(PAGE * 100),
            headers={"Content-Type": "text/html", "Content-Encoding": "gzip"},
        )
        s.routes["/gone"] = Reply(b"<title>404 Not Found</title>", 404)
        s.routes["/broken"] = Reply(b"<title>503 Service Unavailable</title>", 503)
        s.routes["/hop"] = Reply(b"", 302, {"Location": "/page"})
        s.routes["/loop"] = Reply(b"", 302, {"Location": "/loop"})
        s.routes["/file"] = Reply(b"", 302, {"Location": "file:///etc/passwd"})
        yield s


def test_success_keeps_body_headers_and_redirect_chain(
    site: FixtureServer, run_fetch: RunFetch
) -> None:
    r = run_fetch(f"{site.base}/hop")
    assert r.code == 0 and r.result.status == "succeeded"
    assert (r.cwd / "body.html").read_bytes() == PAGE
    assert r.meta["status"] == 200 and r.meta["final_url"] == f"{site.base}/page"
    assert r.meta["redirects"] == [{"url": f"{site.base}/hop", "status": 302}]
    assert ["x-a", "1"] in r.meta["headers"] and r.meta["truncated"] is False
    snap = next(x for x in r.records if isinstance(x, SnapshotRecord))
    assert snap.final_url == f"{site.base}/page"
    assert r.files["body.html"].kind == "raw_response" and not r.files["body.html"].truncated


def test_warc_replays_every_hop_and_the_stored_body(
    site: FixtureServer, run_fetch: RunFetch
) -> None:
    r = run_fetch(f"{site.base}/hop")
    assert r.files["fetch.warc.gz"].kind == "warc"
    with (r.cwd / "fetch.warc.gz").open("rb") as f:
        records = [
            (rec.rec_type, rec.rec_headers.get_header("WARC-Target-URI"), rec)
            for rec in ArchiveIterator(f)
        ]
        kinds = [(t, u) for t, u, _ in records]
        responses = {u: rec for t, u, rec in records if t == "response"}
        assert kinds == [
            ("warcinfo", None),
            ("response", f"{site.base}/hop"),
            ("request", f"{site.base}/hop"),
            ("response", f"{site.base}/page"),
            ("request", f"{site.base}/page"),
        ]
    final = responses[f"{site.base}/page"]
    assert final.http_headers.get_statuscode() == "200"
    assert final.rec_headers.get_header("WARC-IP-Address") == "127.0.0.1"


def test_warc_payload_equals_stored_body_when_gzipped(
    site: FixtureServer, run_fetch: RunFetch
) -> None:
    r = run_fetch(f"{site.base}/gz")
    assert r.result.status == "succeeded"
    with (r.cwd / "fetch.warc.gz").open("rb") as f:
        rec = next(x for x in ArchiveIterator(f) if x.rec_type == "response")
        assert rec.http_headers.get_header("Content-Encoding") == "gzip"
        assert rec.content_stream().read() == (r.cwd / "body.html").read_bytes() == PAGE * 100


def test_404_is_a_soft_failure_and_its_page_is_not_stored(
    site: FixtureServer, run_fetch: RunFetch
) -> None:
    r = run_fetch(f"{site.base}/gone")
    assert r.code == 0
    assert r.result.status == "failed" and r.result.error_code == "E_FETCH_HTTP_404"
    assert not list(r.cwd.glob("body*")), "an error page is never stored as the page"
    assert r.meta["status"] == 404


def test_503_is_a_hard_failure_and_its_page_is_not_stored(
    site: FixtureServer, run_fetch: RunFetch
) -> None:
    r = run_fetch(f"{site.base}/broken")
    assert r.code == 1 and r.result.error_code == "E_FETCH_HTTP_5XX"
    assert not list(r.cwd.glob("body*"))


def test_unreachable_is_a_hard_failure(run_fetch: RunFetch) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    r = run_fetch(f"http://127.0.0.1:{port}/")
    assert r.code == 1 and r.result.error_code == "E_FETCH_FAILED"


def test_private_targets_refused_in_production(site: FixtureServer, run_fetch: RunFetch) -> None:
    r = run_fetch(f"{site.base}/page", ALLOW_PRIVATE_TARGETS="false")
    assert r.code == 0 and r.result.error_code == "E_FETCH_REFUSED"
    assert not list(r.cwd.glob("body*")) and not list(r.cwd.glob("*.warc.gz"))
    assert not site.requests, "no request may reach a refused target"


def test_a_name_that_does_not_exist_is_said_so_and_not_retried(run_fetch: RunFetch) -> None:
    r = run_fetch("http://no-such-site.invalid/page")  # .invalid never resolves (RFC 6761)
    assert r.code == 0 and r.result.error_code == "E_FETCH_NO_HOST"
    assert "cannot resolve no-such-site.invalid" in (r.result.output_str or "")


def test_redirect_loops_stop(site: FixtureServer, run_fetch: RunFetch) -> None:
    r = run_fetch(f"{site.base}/loop", FETCH_MAX_REDIRECTS="3")
    assert r.code == 0 and r.result.error_code == "E_FETCH_REDIRECTS"


def test_redirect_to_file_is_refused(site: FixtureServer, run_fetch: RunFetch) -> None:
    r = run_fetch(f"{site.base}/file")
    assert r.code == 0 and r.result.error_code == "E_FETCH_REFUSED"


def test_credentials_in_the_url_are_never_sent_or_written(
    site: FixtureServer, run_fetch: RunFetch
) -> None:
    r = run_fetch(f"http://alice:s3cret@127.0.0.1:{site.port}/page")
    assert r.result.status == "succeeded"
    _path, headers = site.requests[0]
    assert "authorization" not in {k.lower() for k in headers}
    for f in r.cwd.iterdir():
        data = gzip.decompress(f.read_bytes()) if f.name.endswith(".gz") else f.read_bytes()
        assert b"s3cret" not in data and b"alice" not in data, f.name
    assert r.meta["url"] == f"{site.base}/page"


def test_user_agent_is_the_setting(site: FixtureServer, run_fetch: RunFetch) -> None:
    run_fetch(f"{site.base}/page", USER_AGENT="ArchiverTest/9")
    assert site.requests[0][1]["User-Agent"] == "ArchiverTest/9"


def test_body_over_the_cap_is_partial_and_marked_truncated(
    site: FixtureServer, run_fetch: RunFetch, tmp_path: Path
) -> None:
    site.routes["/big"] = Reply(b"<p>" + b"x" * 100_000)
    r = run_fetch(f"{site.base}/big", FETCH_MAX_BYTES="1000")
    assert r.code == 0
    assert r.result.status == "partial" and r.result.error_code == "E_FETCH_TOO_LARGE"
    assert (r.cwd / "body.html").stat().st_size == 1000
    assert r.files["body.html"].truncated and r.meta["truncated"] is True
    with (r.cwd / "fetch.warc.gz").open("rb") as f:
        rec = next(x for x in ArchiveIterator(f) if x.rec_type == "response")
        assert rec.rec_headers.get_header("WARC-Truncated") == "length"
