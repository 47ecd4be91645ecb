"""Content a page's scripts render after the load event is in the capture: the navigate hook
waits for the page to settle (no request in flight, no short timer pending, no element added
or removed for NAVIGATE_QUIET_MS), at most NAVIGATE_SETTLE_MS."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from testkit.browser import BrowserHarness, run_hooks
from testkit.httpserver import FixtureServer, Reply

pytestmark = pytest.mark.integration

RENDERED = "Rendered after the load event"
SHELL = '<div id="app">Loading</div>'

TIMER_PAGE = """<html><head><title>Loading</title></head><body><div id=app>Loading</div><script>
setTimeout(() => {{ document.title = 'Rendered';
  document.getElementById('app').innerHTML = '<article><h1>{rendered}</h1></article>'; }}, {ms});
</script></body></html>"""
TIMER = TIMER_PAGE.format(rendered=RENDERED, ms=1200)
LATE_TIMER = TIMER_PAGE.format(rendered=RENDERED, ms=20000)
"""Rendered long after the load event: without settling, the dom hook reads the shell even
when a loaded machine takes seconds between navigate's end and the dom hook's read."""

FETCHED = """<html><head><title>Loading</title></head><body><div id=app>Loading</div><script>
window.addEventListener('load', () => fetch('/api').then(r => r.json()).then(data =>
  setTimeout(() => { document.getElementById('app').innerHTML = `<p>${data.text}</p>`; }, 0)));
</script></body></html>"""

# a clock re-arming its own timer and an interval changing text: busy forever, yet settled
CLOCK = f"""<html><body><h1>{RENDERED}</h1><span id=clock></span><span id=tick></span><script>
const clock = () => {{
  document.getElementById('clock').textContent = Date.now(); setTimeout(clock, 500); }};
clock();
setInterval(() => {{ document.getElementById('tick').textContent = Math.random(); }}, 200);
document.title = [setTimeout, clearTimeout, clearInterval].every(
  f => f.toString().includes('[native code]')) ? 'native' : 'wrapped';
</script></body></html>"""

GROWING = """<html><body><div id=feed></div><script>
setInterval(() => document.getElementById('feed').append(document.createElement('p')), 100);
</script></body></html>"""

STATIC = f"<html><head><title>Static</title></head><body><h1>{RENDERED}</h1></body></html>"


def slow_api(handler: BaseHTTPRequestHandler) -> Reply:
    time.sleep(0.8)
    body = json.dumps({"text": RENDERED}).encode()
    return Reply(body, headers={"Content-Type": "application/json"})


@pytest.fixture
def site() -> Iterator[FixtureServer]:
    with FixtureServer() as s:
        pages = {"/timer": TIMER, "/late-timer": LATE_TIMER, "/fetched": FETCHED,
                 "/clock": CLOCK, "/growing": GROWING, "/static": STATIC}  # fmt: skip
        for path, page in pages.items():
            s.routes[path] = Reply(page.encode())
        s.routes["/api"] = slow_api
        yield s


async def capture(
    browser: BrowserHarness, url: str, out: Path, settle_ms: str = "5000"
) -> tuple[dict[str, Any], str]:
    seen = await run_hooks(browser, url, out, ["navigate", "dom"], NAVIGATE_SETTLE_MS=settle_ms)
    assert seen.final["navigate"].status == "succeeded", seen.final["navigate"]
    assert seen.final["dom"].status == "succeeded", seen.final["dom"]
    nav = json.loads((out / "navigate" / "navigate.json").read_text())
    return nav, (out / "dom" / "dom.html").read_text()


@pytest.mark.parametrize("path", ["/timer", "/fetched", "/clock", "/static"])
async def test_what_scripts_render_after_load_is_captured(
    browser: BrowserHarness, site: FixtureServer, tmp_path: Path, path: str
) -> None:
    nav, dom = await capture(browser, f"{site.base}{path}", tmp_path)
    assert nav["settle"]["settled"] is True, nav["settle"]
    assert RENDERED in dom and SHELL not in dom
    if path == "/clock":
        assert "<title>native</title>" in dom  # the watch leaves the page's timers native


async def test_without_settling_the_load_event_ends_the_wait(
    browser: BrowserHarness, site: FixtureServer, tmp_path: Path
) -> None:
    nav, dom = await capture(browser, f"{site.base}/late-timer", tmp_path, "0")
    assert "settle" not in nav
    assert SHELL in dom


async def test_a_page_that_never_settles_is_captured_at_the_limit(
    browser: BrowserHarness, site: FixtureServer, tmp_path: Path
) -> None:
    nav, dom = await capture(browser, f"{site.base}/growing", tmp_path, "1000")
    settle = nav["settle"]
    assert settle["settled"] is False and settle["pending"] == {"requests": 0, "timers": 0}
    assert settle["waited_ms"] >= 1000
    assert "<p></p>" in dom
