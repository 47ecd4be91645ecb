"""The fetch hook as a real subprocess against a fixture server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.hooks.records import ArchiveResultRecord, HookRecord, SnapshotRecord, parse_record
from testkit.httpserver import FixtureServer, Reply

HOOK = Path(__file__).resolve().parents[1] / "on_Snapshot__61_fetch.py"


@pytest.fixture
def site() -> Iterator[FixtureServer]:
    with FixtureServer() as s:
        s.routes["/page"] = Reply(b"<p>hi</p>", headers={"Content-Type": "text/html", "X-A": "1"})
        s.routes["/gone"] = Reply(b"no", 404)
        s.routes["/broken"] = Reply(b"oops", 500)
        s.routes["/hop"] = Reply(b"", 302, {"Location": "/page"})
        s.routes["/loop"] = Reply(b"", 302, {"Location": "/loop"})
        yield s


def run(url: str, cwd: Path, **env: str) -> tuple[int, list[HookRecord]]:
    full = {**os.environ, "ALLOW_PRIVATE_TARGETS": "true", "FETCH_TIMEOUT": "10", **env}
    proc = subprocess.run(
        [sys.executable, str(HOOK), f"--url={url}", "--snapshot-id=s1"],
        cwd=cwd, env=full, capture_output=True, timeout=30,
    )  # fmt: skip
    records = [parse_record(line) for line in proc.stdout.decode().splitlines() if line.strip()]
    return proc.returncode, records


def result(records: list[HookRecord]) -> ArchiveResultRecord:
    return next(r for r in records if isinstance(r, ArchiveResultRecord))


def test_success_keeps_body_headers_and_redirect_chain(site: FixtureServer, tmp_path: Path) -> None:
    code, records = run(f"{site.base}/hop", tmp_path)
    assert code == 0 and result(records).status == "succeeded"
    assert (tmp_path / "body.html").read_bytes() == b"<p>hi</p>"
    meta = json.loads((tmp_path / "headers.json").read_text())
    assert meta["status"] == 200 and meta["final_url"] == f"{site.base}/page"
    assert meta["redirects"] == [{"url": f"{site.base}/hop", "status": 302}]
    assert ["x-a", "1"] in meta["headers"]
    snap = next(r for r in records if isinstance(r, SnapshotRecord))
    assert snap.final_url == f"{site.base}/page"


def test_404_is_a_soft_failure(site: FixtureServer, tmp_path: Path) -> None:
    code, records = run(f"{site.base}/gone", tmp_path)
    assert code == 0
    assert result(records).status == "failed" and result(records).error_code == "E_FETCH_HTTP_404"


def test_500_is_a_hard_failure(site: FixtureServer, tmp_path: Path) -> None:
    code, records = run(f"{site.base}/broken", tmp_path)
    assert code == 1 and result(records).error_code == "E_FETCH_HTTP_5XX"


def test_unreachable_is_a_hard_failure(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, records = run(f"http://127.0.0.1:{port}/", tmp_path)
    assert code == 1 and result(records).error_code == "E_FETCH_FAILED"


def test_private_targets_refused_in_production(site: FixtureServer, tmp_path: Path) -> None:
    code, records = run(f"{site.base}/page", tmp_path, ALLOW_PRIVATE_TARGETS="false")
    assert code == 0 and result(records).error_code == "E_FETCH_REFUSED"
    assert not list(tmp_path.glob("body*"))
    assert not site.requests, "no request may reach a refused target"


def test_redirect_loops_stop(site: FixtureServer, tmp_path: Path) -> None:
    code, records = run(f"{site.base}/loop", tmp_path, FETCH_MAX_REDIRECTS="3")
    assert code == 0 and result(records).error_code == "E_FETCH_REDIRECTS"


def test_body_is_capped(site: FixtureServer, tmp_path: Path) -> None:
    site.routes["/big"] = Reply(b"x" * 100_000)
    code, records = run(f"{site.base}/big", tmp_path, FETCH_MAX_BYTES="1000")
    assert code == 0 and "truncated" in result(records).output_str
    assert (tmp_path / "body.html").stat().st_size == 1000
