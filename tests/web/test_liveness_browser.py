"""The liveness pages in Debian's Chromium with a real S3: two captures compared word by
word, the link page's source status and captures, gone links in search; under the CSP, no
script, no sideways scrolling. Screenshots land in test-output/web/ for people to look at."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator

import pytest

from shared.s3 import ObjectStore
from tests.web.liveness_archive import STORED, build
from tests.web.test_artifacts import s3_settings
from tests.web.test_browser import OUT, SIZES, Watch, browser, live_app

pytestmark = pytest.mark.integration
__all__ = ["browser"]  # the module's Chromium (its `server` is this module's)
PAGES = {
    "liveness-link": "/links/1",
    "liveness-gone": "/links/3",
    "liveness-compare": "/links/1/compare",
    "liveness-search": "/search?q=bridge+May",
    "liveness-gone-list": "/search?source_status=gone",
}


@pytest.fixture(scope="module")
def server(s3_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("liveness-browser")
    build(data / "archive.sqlite3").conn.close()
    settings = s3_settings(data, s3_env)

    async def upload() -> None:
        async with ObjectStore(settings) as store:
            await store.ensure_bucket()
            for f in STORED:
                await store.put_bytes(f.s3_key, f.data, f.content_type)

    asyncio.run(upload())
    with live_app(settings, nats=False) as base:
        yield base


def test_the_word_diff_and_the_screenshots_side_by_side(browser, server: str) -> None:
    w = Watch(browser)
    try:
        w.page.goto(server + "/links/1/compare")
        assert w.page.locator(".side-by-side img").count() == 2
        w.page.wait_for_function(  # an image still loading reads 0 wide (load 14 in make test)
            "[...document.querySelectorAll('.side-by-side img')].every(i => i.complete)"
        )
        widths = w.page.locator(".side-by-side img").evaluate_all("i => i.map(x => x.naturalWidth)")
        assert widths == [640, 640], "both screenshots are our copies, loaded"
        diff = w.page.locator(".diff")
        assert diff.locator("del").all_inner_texts() == ["May."]
        assert diff.locator("ins").all_inner_texts() == ["June."]
        assert "Traffic will be diverted." in diff.inner_text()
        w.page.select_option("select[name=a]", index=0)
        w.page.click(".compare-form button")
        w.page.wait_for_url(re.compile(r".*/compare\?a=[0-9a-f]{32}&b=[0-9a-f]{32}$"))
        assert "say the same words" in w.page.locator("#diff").inner_text()
        assert not w.errors, w.errors
    finally:
        w.close()


def test_every_liveness_page_renders_under_the_csp_and_is_screenshotted(
    browser, server: str
) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for size in SIZES:
        w = Watch(browser, size)
        try:
            for name, path in PAGES.items():
                resp = w.page.goto(server + path)
                assert resp is not None and resp.status == 200, path
                w.page.screenshot(path=str(OUT / f"{name}-{size}.png"), full_page=True)
                wide = w.page.evaluate("() => document.documentElement.scrollWidth")
                assert wide <= SIZES[size]["width"], f"{path} scrolls sideways at {size}"
                assert w.page.locator("script").count() == 0, path
            assert not w.errors, w.errors
        finally:
            w.close()
