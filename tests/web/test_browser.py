"""The UI in Debian's Chromium (Playwright): pages render under the CSP, the forms work,
and hostile archived content never runs script. Screenshots of every page at desktop and
phone width (light and dark) land in test-output/web/ for people to look at."""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from services.supervisor.children import free_ports
from services.web.app import create_app
from services.web.settings import WebSettings
from tests.web.test_artifacts import s3_settings, upload

pytestmark = pytest.mark.integration
playwright = pytest.importorskip("playwright.sync_api")

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]  # fmt: skip
OUT = Path(__file__).resolve().parents[2] / "test-output" / "web"
SIZES = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
PAGES = {
    "home": "/",
    "link": "/links/1",
    "post": "/links/5",
    "search": "/search?q=sourdough",
    "stats": "/stats",
}


@contextlib.contextmanager
def live_app(settings: WebSettings, *, nats: bool = True) -> Iterator[str]:
    """The real app under uvicorn on a free port (its base URL), until the block ends; ready
    once it answers (and, with `nats`, is connected to NATS)."""
    (port,) = free_ports(1)
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                health = httpx.get(base + "/healthz", timeout=2).json()
                if health.get("nats") or not nats:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        yield base
    finally:
        srv.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def server(archive: Path, s3_env: dict[str, str], tmp_path_factory) -> Iterator[str]:
    """The real app under uvicorn on a free port, with SeaweedFS and nats-server."""
    from services.supervisor.infra import start_nats

    nats_dir = tmp_path_factory.mktemp("nats")
    nats = start_nats(nats_dir, nats_dir / "nats.log")
    settings = s3_settings(archive, s3_env, nats_url=nats.url, rearchive_interval_seconds=600)
    asyncio.run(upload(settings))
    try:
        with live_app(settings) as base:
            yield base
    finally:
        nats.child.stop()


@pytest.fixture(scope="module")
def browser(server: str) -> Iterator[object]:
    with chromium() as b:
        yield b


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """Debian's Chromium under Playwright (the test is skipped without it)."""
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield b
        finally:
            b.close()


class Watch:
    """A page that records console errors (CSP violations show up there)."""

    def __init__(self, browser, size: str = "desktop", scheme: str = "light") -> None:
        self.context = browser.new_context(viewport=SIZES[size], color_scheme=scheme)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _console(self, message) -> None:
        # 4xx answers the test asks for are logged too; anything else (CSP) is an error
        expected = "the server responded with a status of 4"
        if message.type == "error" and expected not in message.text:
            self.errors.append(message.text)

    def pwned(self) -> bool:
        return bool(self.page.evaluate("() => window.__pwned === 1"))

    def close(self) -> None:
        self.context.close()


def test_every_page_renders_under_the_csp_and_is_screenshotted(browser, server: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for size in SIZES:
        for scheme in ("light", "dark"):
            w = Watch(browser, size, scheme)
            try:
                for name, path in [*PAGES.items(), ("api", "/api/docs")]:
                    resp = w.page.goto(server + path)
                    assert resp is not None and resp.status == 200, path
                    assert w.page.locator("h1").first.is_visible(), path
                    suffix = "" if scheme == "light" else "-dark"
                    w.page.screenshot(path=str(OUT / f"{name}-{size}{suffix}.png"), full_page=True)
                    assert not w.pwned(), path
                    wide = w.page.evaluate("() => document.documentElement.scrollWidth")
                    assert wide <= SIZES[size]["width"], f"{path} scrolls sideways at {size}"
                assert not w.errors, w.errors
            finally:
                w.close()


def test_hostile_archive_content_never_runs(browser, server: str) -> None:
    w = Watch(browser)
    try:
        w.page.goto(server + "/links/1")
        assert "<script>window.__pwned=1</script> Sourdough" in w.page.locator("h1").inner_text()
        reader = w.page.locator("#reader .prose")
        assert "Starter care" in reader.inner_text()
        assert reader.locator("script, iframe, style, [onerror]").count() == 0
        # the one image is our copy, loaded under the page's CSP; nothing from other sites
        assert reader.locator("img").count() == 1
        assert reader.locator("img").evaluate("img => img.naturalWidth") == 120
        assert reader.locator("img").get_attribute("src", timeout=1000).startswith("/artifacts/")
        assert w.page.locator("a[href^='javascript']").count() == 0
        assert w.page.locator(".shot img").evaluate("img => img.naturalWidth") == 800
        w.page.goto(server + "/search?q=javascript")
        assert w.page.locator("mark").count() >= 1
        assert not w.pwned() and not w.errors, w.errors
    finally:
        w.close()


def test_the_post_card_shows_our_copies(browser, server: str) -> None:
    for size in SIZES:
        w = Watch(browser, size)
        try:
            w.page.goto(server + "/links/5")
            card = w.page.locator("#post .post-card").first
            assert (
                "Ada Example" in card.inner_text()
                and "captured via syndication" in card.inner_text()
            )
            images = w.page.locator("#post .post-media img")
            assert images.count() == 4
            for i in range(4):  # loading=lazy: an image loads once near the viewport, after
                images.nth(i).scroll_into_view_if_needed()  # the load event goto waits for
            w.page.wait_for_function(
                "() => [...document.querySelectorAll('#post .post-media img')]"
                ".every(i => i.complete)"
            )
            widths = images.evaluate_all("imgs => imgs.map(i => i.naturalWidth)")
            assert widths == [640] * 4, "every image is our copy, loaded"
            sources = images.evaluate_all("imgs => imgs.map(i => new URL(i.src).origin)")
            assert set(sources) == {server}
            assert not w.errors, w.errors
        finally:
            w.close()


def test_submit_form_search_form_and_rearchive(browser, server: str) -> None:
    w = Watch(browser)
    try:
        w.page.goto(server + "/")
        w.page.fill("#submit-url", "https://x.com/someone/status/12345")
        w.page.click("form.submit button")
        w.page.wait_for_url(re.compile(r".*/submissions/[0-9a-f]{32}$"))
        assert "Waiting for the archiver" in w.page.content()

        w.page.goto(server + "/")
        w.page.fill("#submit-url", "https://web.archive.org/web/1/https://x.com/")
        w.page.click("form.submit button")
        assert "excluded:web.archive.org" in w.page.locator("main").inner_text()

        w.page.goto(server + "/")
        w.page.fill("#q", "sourdough starter")
        w.page.press("#q", "Enter")
        w.page.wait_for_url(re.compile(r".*/search\?q=sourdough"))
        assert w.page.locator("ol.items li").count() == 1
        assert "Sourdough" in w.page.locator("ol.items").inner_text()

        w.page.goto(server + "/links/4")
        w.page.click("text=Archive again")
        w.page.wait_for_url(re.compile(r".*/submissions/[0-9a-f]{32}$"))
        w.page.goto(server + "/links/4")
        w.page.click("text=Archive again")
        assert "Slow down" in w.page.locator("h1").inner_text()
        assert not w.pwned() and not w.errors, w.errors
    finally:
        w.close()
