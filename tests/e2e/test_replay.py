"""Replay end to end: a page whose text comes from a JSON API call is captured by the whole
stack (real NATS, SeaweedFS, Chromium), then opened in real Chromium from its link page's
"View as it was": the API's text shows inside the replay, which runs on the replay origin
(``http://replay.localhost:<port>``, the default beside a UI on 127.0.0.1). A script in the
replayed page cannot read the UI's cookie (a non-HttpOnly one is set on the UI's origin) nor
get an answer from ``/admin`` on either origin; the replayed page's policy lets it connect to
the replay origin only. Screenshots land in test-output/replay/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from services.web.replay import bundle
from testkit.httpserver import FixtureServer, Reply
from tests.e2e.conftest import Forum, Running
from tests.web.test_browser import ARGS, CHROMIUM

pytestmark = pytest.mark.integration
playwright = pytest.importorskip("playwright.sync_api")

OUT = Path(__file__).resolve().parents[2] / "test-output" / "replay"
API_TEXT = "forty-two-from-the-api"
UI_COOKIE = "ui-only-cookie-7c1e95"
PAGE = b"""<!doctype html><html><head><meta charset="utf-8"><title>Replayed page</title>
<script src="/app.js"></script></head>
<body><h1>Replayed page</h1><p id="out">loading</p><p id="probe">probing</p></body></html>"""
SCRIPT = b"""fetch('/api/data.json').then(r => r.json()).then(d => {
  document.getElementById('out').textContent = 'API says ' + d.answer; });
fetch('/admin').then(r => r.text().then(t => 'admin ' + r.status + ' ' + t.slice(0, 80)),
                     e => 'admin refused ' + e).then(admin => {
  document.getElementById('probe').textContent = 'cookie=[' + document.cookie + '] ' + admin; });
"""
KEEP_NATIVE_FETCH = "Object.defineProperty(window, '__nativeFetch', {value: window.fetch})"
"""Run in every document before its own scripts: the replayed page's native fetch, kept before
the replay's wombat.js wraps it (wombat rewrites a fetch's URL into the archive, so only the
native one shows what the document's policy does with an address outside the replay origin).
Taking it from a new iframe instead raced wombat, which wraps a new frame's fetch too."""

PROBE = """async ([ui, replay]) => {
  const tryFetch = async (url) => {
    try {
      const r = await fetch(url, {credentials: 'include'});
      return r.status + ' ' + (await r.text()).slice(0, 200);
    } catch (e) { return 'refused ' + e; }
  };
  const escaped = async (url) => {  // the document's own fetch, kept before wombat wrapped it
    try {
      const r = await window.__nativeFetch.call(window, url, {credentials: 'include'});
      return r.status + ' ' + (await r.text()).slice(0, 200);
    } catch (e) { return 'refused ' + e; }
  };
  return {
    escaped_ui_admin: await escaped(ui + '/admin/queue.json'),
    escaped_self: await escaped(replay + '/replay/ui.js'),
    origin: location.origin,
    cookie: document.cookie,
    admin: await tryFetch('/admin/queue.json'),
    ui_admin: await tryFetch(ui + '/admin/queue.json'),
    replay_admin: await tryFetch(replay + '/admin/queue.json'),
    ui_page: await tryFetch(ui + '/'),
  };
}"""


@pytest.fixture(scope="module", autouse=True)
def viewer() -> Path:
    """The pinned viewer's files (`make bootstrap` fetched them; a bare pytest run does)."""
    return bundle.ensure()


def serve_page(web: FixtureServer) -> None:
    web.routes["/page.html"] = Reply(PAGE, headers={"Content-Type": "text/html"})
    web.routes["/app.js"] = Reply(SCRIPT, headers={"Content-Type": "application/javascript"})
    web.routes["/api/data.json"] = Reply(
        json.dumps({"answer": API_TEXT}).encode(), headers={"Content-Type": "application/json"}
    )


def link_with_wacz(running: Running, link_id: int) -> dict[str, Any] | None:
    link: dict[str, Any] = running.http.get(f"{running.web}/links/{link_id}.json", timeout=5).json()
    return link if link.get("replay_url") else None


def replayed_frame(page: Any, timeout_s: float) -> Any:
    """The frame that shows the archived page (ReplayWeb.page's innermost), once it shows the
    API's text."""
    deadline_ms = timeout_s * 1000
    waited = 0
    while waited < deadline_ms:
        for frame in page.frames:
            if "/replay/w/" not in frame.url:
                continue
            try:
                if API_TEXT in frame.locator("body").inner_text(timeout=1000):
                    return frame
            except playwright.Error:
                pass
        page.wait_for_timeout(250)
        waited += 250
    urls = [f.url for f in page.frames]
    raise AssertionError(f"the replay never showed the API's text; frames: {urls}")


def test_view_as_it_was_replays_the_api_data_on_an_origin_of_its_own(
    forum: Forum, outside_web: FixtureServer, running: Running
) -> None:
    serve_page(outside_web)
    forum.add(401, f'<p>See <a href="{outside_web.base}/page.html">the page</a>.</p>')
    link = running.wait_for(lambda: running.archived("/page.html"), 120, "the link archived")
    running.wait_for(lambda: link_with_wacz(running, link["id"]), 90, "its WACZ stored")
    port = running.web.rsplit(":", 1)[1]
    replay_origin = f"http://replay.localhost:{port}"
    OUT.mkdir(parents=True, exist_ok=True)
    messages: list[str] = []

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.add_cookies(
                [{"name": "ui_session", "value": UI_COOKIE, "url": running.web, "httpOnly": False}]
            )
            context.add_init_script(KEEP_NATIVE_FETCH)
            page = context.new_page()
            page.goto(f"{running.web}/links/{link['id']}", wait_until="load")
            assert UI_COOKIE in page.evaluate("document.cookie")  # readable on the UI's origin
            with context.expect_page() as opened:
                page.get_by_role("link", name="View as it was").click()
            replay = opened.value
            replay.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
            policies: dict[str, str] = {}
            replay.on("response", lambda r: policies.setdefault(
                r.url, r.headers.get("content-security-policy", "")))  # fmt: skip
            frame = replayed_frame(replay, 120)
            replay.screenshot(path=str(OUT / "replay.png"), full_page=True)

            assert replay.url.startswith(f"{replay_origin}/view/")
            assert frame.url.startswith(f"{replay_origin}/replay/w/")
            assert f"API says {API_TEXT}" in frame.locator("#out").inner_text()
            # the archived page's own script: no UI cookie; /admin is the archived site's 404
            probe = frame.locator("#probe")
            probe.filter(has_text="admin").wait_for(timeout=30_000)
            said = probe.inner_text()
            assert UI_COOKIE not in said and "admin 404" in said, said
            # any script in that frame: no UI cookie, no admin answer from either origin
            violations = [m for m in messages if "Content Security Policy" in m]
            assert not violations, violations  # the viewer runs within its policy
            found = frame.evaluate(PROBE, [running.web, replay_origin])
            assert found["origin"] == replay_origin
            assert UI_COOKIE not in found["cookie"], found
            for what in ("admin", "ui_admin", "replay_admin", "ui_page", "escaped_ui_admin"):
                assert not found[what].startswith("200"), (what, found)
                assert '"jobs"' not in found[what] and "<!doctype" not in found[what].lower()
            assert found["escaped_ui_admin"].startswith("refused"), found  # the policy's doing
            # the same fetch within the replay origin is answered (by the service worker): the
            # refusal above is the policy's, not a fetch that never works
            assert found["escaped_self"][:3].isdigit(), found
            # the replayed document's policy (the service worker's): nothing beyond this origin
            document_csp = policies[frame.url]
            assert "default-src 'unsafe-eval' 'unsafe-inline' 'self' data: blob:" in document_csp
            assert running.web not in document_csp and "*" not in document_csp
            # the viewer's page itself: its own policy, no cookie of the UI's
            view = httpx.get(replay.url.replace(replay_origin, running.web), timeout=5,
                             headers={"host": replay_origin.split("//")[1]})  # fmt: skip
            view_csp = view.headers["content-security-policy"]
            assert "connect-src 'self'" in view_csp and "frame-ancestors 'self'" in view_csp
            assert UI_COOKIE not in replay.evaluate("document.cookie")
        finally:
            browser.close()
