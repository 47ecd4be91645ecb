"""The screenshot hook on a real archiver browser page: a real PNG, height capped."""

from __future__ import annotations

import asyncio
import struct
from pathlib import Path

import pytest

from testkit.browser import BrowserHarness, run_hooks
from testkit.httpserver import FixtureServer, Reply

pytestmark = pytest.mark.integration
TALL = (
    b"<html><body style='margin:0'><div style='height:3000px;background:#c00'>x</div></body></html>"
)


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


async def test_full_page_png_capped_at_max_height(browser: BrowserHarness, tmp_path: Path) -> None:
    with FixtureServer() as site:
        site.routes["/tall"] = Reply(TALL)
        seen = await run_hooks(
            browser, f"{site.base}/tall", tmp_path, ["navigate", "screenshot"],
            SCREENSHOT_MAX_HEIGHT="2000",
        )  # fmt: skip
    result = seen.final["screenshot"]
    assert result.status == "succeeded", result
    assert result.output_str == "screenshot.png 1280x2000 (cut from 3000 px)"
    assert png_size(tmp_path / "screenshot" / "screenshot.png") == (1280, 2000)


async def test_drawn_smaller_at_a_scale(browser: BrowserHarness, tmp_path: Path) -> None:
    with FixtureServer() as site:
        site.routes["/tall"] = Reply(TALL)
        seen = await run_hooks(
            browser, f"{site.base}/tall", tmp_path, ["navigate", "screenshot"],
            SCREENSHOT_MAX_HEIGHT="2000", SCREENSHOT_SCALE="0.75",
        )  # fmt: skip
        refused = await run_hooks(
            browser, f"{site.base}/tall", tmp_path / "refused", ["screenshot"],
            SCREENSHOT_SCALE="1.5",
        )  # fmt: skip
    result = seen.final["screenshot"]
    assert result.status == "succeeded", result
    # the cap is in page pixels: 2000 of them, drawn as 1500
    assert result.output_str == (
        "screenshot.png 960x1500 (cut from 3000 px) (page drawn at 0.75 scale)"
    )
    assert png_size(tmp_path / "screenshot" / "screenshot.png") == (960, 1500)
    bad = refused.final["screenshot"]
    assert (bad.status, bad.error_code) == ("failed", "E_SCREENSHOT_CONFIG"), bad
    assert "SCREENSHOT_SCALE: 1.5 is greater than the maximum of 1" in bad.output_str
    assert not (tmp_path / "refused" / "screenshot" / "screenshot.png").exists()


async def test_whole_page_when_uncapped(browser: BrowserHarness, tmp_path: Path) -> None:
    with FixtureServer() as site:
        site.routes["/tall"] = Reply(TALL)
        seen = await run_hooks(
            browser, f"{site.base}/tall", tmp_path, ["screenshot"], SCREENSHOT_MAX_HEIGHT="0"
        )  # navigate disabled: the screenshot hook loads the page itself (a retry)
    assert seen.final["screenshot"].status == "succeeded"
    assert png_size(tmp_path / "screenshot" / "screenshot.png") == (1280, 3000)


async def test_skipped_when_navigation_left_no_document(
    browser: BrowserHarness, tmp_path: Path
) -> None:
    seen = await run_hooks(browser, "http://127.0.0.1:9/", tmp_path, ["navigate", "screenshot"])
    assert seen.final["navigate"].error_code == "E_NAVIGATE_FAILED"
    result = seen.final["screenshot"]
    # it reads navigate's page ("reads" in config.json): the runner skips it until that succeeds
    assert (result.status, result.error_code) == ("skipped", "E_SCREENSHOT_DEPENDENCY")
    assert not (tmp_path / "screenshot" / "screenshot.png").exists()


async def test_an_http_error_page_is_not_captured(browser: BrowserHarness, tmp_path: Path) -> None:
    with FixtureServer() as site:
        site.routes["/gone"] = Reply(b"<h1>Not here</h1>", 404)
        seen = await run_hooks(browser, f"{site.base}/gone", tmp_path, ["navigate", "screenshot"])
        alone = await run_hooks(browser, f"{site.base}/gone", tmp_path / "alone", ["screenshot"])
    assert seen.final["navigate"].error_code == "E_NAVIGATE_HTTP_404"
    assert seen.final["screenshot"].error_code == "E_SCREENSHOT_DEPENDENCY"
    # run alone (a retry), it loads the page itself and still refuses to capture an error page
    result = alone.final["screenshot"]
    assert (result.status, result.error_code) == ("skipped", "E_SCREENSHOT_HTTP_ERROR")


@pytest.mark.parametrize("disposition", ["", 'attachment; filename="r.pdf"'])
async def test_a_pdf_document_is_left_to_fetch_and_readable(
    browser: BrowserHarness, tmp_path: Path, disposition: str
) -> None:
    # full Chromium's PDF viewer shows the document without its content: no blank captures;
    # the headless shell has no viewer and downloads it, as both do with an attachment: the
    # PDF is the page's document all the same (a download of another type is refused)
    from testkit.pdfdoc import pdf_document

    headers = {"Content-Type": "application/pdf"}
    if disposition:
        headers["Content-Disposition"] = disposition
    with FixtureServer() as site:
        site.routes["/r.pdf"] = Reply(pdf_document([["Quarterly report"]]), headers=headers)
        seen = await run_hooks(
            browser, f"{site.base}/r.pdf", tmp_path, ["navigate", "screenshot", "pdf", "dom"]
        )
    assert seen.final["navigate"].status == "succeeded", seen.final["navigate"]
    for plugin in ("screenshot", "pdf", "dom"):
        result = seen.final[plugin]
        assert (result.status, result.error_code) == (
            "skipped",
            f"E_{plugin.upper()}_PDF_DOCUMENT",
        ), result
    assert {
        p.name for p in await asyncio.to_thread(lambda: list(tmp_path.rglob("*.*")))
    }.isdisjoint({"screenshot.png", "page.pdf", "dom.html"})
