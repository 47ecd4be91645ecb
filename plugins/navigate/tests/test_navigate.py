"""The navigate hook through the runner, on a real archiver browser page (127.0.0.1)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.hooks.records import SnapshotRecord
from testkit.browser import BrowserHarness, run_hooks
from testkit.httpserver import FixtureServer, Reply

pytestmark = pytest.mark.integration
PAGE = b"<html><head><title>Hello</title></head><body><h1>hi</h1></body></html>"
SHORT = b"<html><head><title>Short</title></head><body><p>the first part"
"""Served with a Content-Length far past it: the connection ends before the body does."""


@pytest.fixture
def site() -> Iterator[FixtureServer]:
    with FixtureServer() as s:
        s.routes["/page"] = Reply(PAGE, headers={"Content-Type": "text/html", "X-A": "1"})
        s.routes["/hop"] = Reply(b"", 302, {"Location": "/page"})
        s.routes["/gone"] = Reply(b"<h1>gone</h1>", 404)
        s.routes["/broken"] = Reply(b"<h1>oops</h1>", 503)
        s.routes["/login"] = Reply(b"<h1>log in</h1>", 401, {"Content-Type": "text/html",
                                   "WWW-Authenticate": 'Basic realm="x"'})  # fmt: skip
        s.routes["/short"] = Reply(SHORT, headers={"Content-Type": "text/html",
                                                   "Content-Length": "1000000"})  # fmt: skip
        yield s


async def test_navigation_records_status_final_url_headers_and_chain(
    browser: BrowserHarness, site: FixtureServer, tmp_path: Path
) -> None:
    seen = await run_hooks(browser, f"{site.base}/hop", tmp_path, ["navigate"])
    result = seen.final["navigate"]
    assert result.status == "succeeded", result
    assert result.output_str == f"HTTP 200 {site.base}/page"
    nav = json.loads((tmp_path / "navigate" / "navigate.json").read_text())
    assert nav["status"] == 200 and nav["final_url"] == f"{site.base}/page"
    assert nav["redirects"] == [{"url": f"{site.base}/hop", "status": 302, "location": "/page"}]
    assert ["X-A", "1"] in nav["headers"]
    assert any(isinstance(r, SnapshotRecord) and r.final_url == f"{site.base}/page"
               for r in seen.records)  # fmt: skip
    assert site.requests[0][1]["User-Agent"] == "DLA-test/1.0"


@pytest.mark.parametrize(
    ("path", "code", "exit_code"),
    [
        ("/gone", "E_NAVIGATE_HTTP_404", 0),
        ("/broken", "E_NAVIGATE_HTTP_5XX", 1),
        ("/login", "E_NAVIGATE_HTTP_401", 0),
    ],
)
async def test_http_error_pages_are_recorded_as_that_status(
    browser: BrowserHarness, site: FixtureServer, tmp_path: Path, path: str, code: str,
    exit_code: int,
) -> None:  # fmt: skip
    seen = await run_hooks(browser, f"{site.base}{path}", tmp_path, ["navigate"])
    result = seen.final["navigate"]
    assert (result.status, result.error_code, result.exit_code) == ("failed", code, exit_code)
    nav = json.loads((tmp_path / "navigate" / "navigate.json").read_text())
    assert nav["status"] == int(code[-3:]) if code[-3:].isdigit() else nav["status"] == 503


async def test_a_document_that_breaks_off_ends_the_navigation_at_once(
    browser: BrowserHarness, site: FixtureServer, tmp_path: Path
) -> None:
    # Chromium leaves such a document loading, with no load event: without the archiver
    # stopping it, the navigation waited out its timeout and read E_NAVIGATE_TIMEOUT
    seen = await run_hooks(browser, f"{site.base}/short", tmp_path, ["navigate"],
                           NAVIGATE_TIMEOUT="60")  # fmt: skip
    result = seen.final["navigate"]
    assert (result.status, result.error_code, result.exit_code) == (
        "failed", "E_NAVIGATE_TRUNCATED", 1)  # fmt: skip
    nav = json.loads((tmp_path / "navigate" / "navigate.json").read_text())
    assert nav["status"] == 200 and nav["document"] and not nav["truncated"]
    assert nav["error"]["code"] == "E_PAGE_TRUNCATED"
    assert "ERR_CONTENT_LENGTH_MISMATCH" in nav["error"]["message"]
    assert [e["type"] for e in nav["events"]] == ["document_ended_early"]
    assert nav["elapsed_s"] < 30, "the navigation waited for a load event that never comes"


async def test_without_a_browser_the_hook_is_skipped(site: FixtureServer, tmp_path: Path) -> None:
    seen = await run_hooks(None, f"{site.base}/page", tmp_path, ["navigate"])
    result = seen.final["navigate"]
    assert (result.status, result.error_code) == ("skipped", "E_NAVIGATE_NO_BROWSER")
