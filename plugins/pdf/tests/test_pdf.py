"""The pdf hook on a real archiver browser page."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.browser import BrowserHarness, run_hooks
from testkit.httpserver import FixtureServer, Reply

pytestmark = pytest.mark.integration


async def test_prints_the_rendered_page(browser: BrowserHarness, tmp_path: Path) -> None:
    with FixtureServer() as site:
        site.routes["/p"] = Reply(b"<html><body><h1>Printed words</h1></body></html>")
        seen = await run_hooks(browser, f"{site.base}/p", tmp_path, ["navigate", "pdf"])
    result = seen.final["pdf"]
    assert result.status == "succeeded", result
    data = (tmp_path / "pdf" / "page.pdf").read_bytes()
    assert data.startswith(b"%PDF-") and b"%%EOF" in data[-64:]
    assert result.output_str == f"page.pdf {len(data)} bytes"
