"""The admin console in Debian's Chromium against the real path: nats-server, SeaweedFS,
a writer process and the web under uvicorn. Log in (a wrong token first), take a link down,
see it gone from its public page, undo it within its window, see it back, read the audit
lines; under the CSP, no script. Screenshots land in test-output/web/console-*.png."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from shared.messages import SubmitCommand
from testkit.live_writer import LiveWriter, publish_all
from tests.web.test_artifacts import s3_settings
from tests.web.test_browser import OUT, Watch, chromium, live_app

pytestmark = pytest.mark.integration
playwright = pytest.importorskip("playwright.sync_api")

SECRET = "correct-horse-battery-staple"
URL = "https://owls.example/where-they-nest"
WAIT_S = 90.0
"""How long the writer gets to apply a command (generous: the machine is shared)."""


@pytest.fixture
def writer(tmp_path: Path, nats_url: str, s3_env: dict[str, str]) -> Iterator[LiveWriter]:
    w = LiveWriter(tmp_path / "data", nats_url, dict(s3_env))
    try:
        yield w.start(timeout=60)
    finally:
        w.close()


@pytest.fixture
def link_id(writer: LiveWriter, nats_url: str) -> int:
    """A link the writer knows (submitted over NATS; no archiver: its job just waits).
    (Before the browser: Playwright's sync API holds an event loop in this thread.)"""
    cmd = SubmitCommand(url=URL, request_id=uuid.uuid4().hex, requested_at=datetime.now(UTC))
    asyncio.run(publish_all(nats_url, [cmd]))
    rows = writer.wait_for(lambda: writer.query("SELECT id FROM links"), WAIT_S, "the link")
    return int(rows[0][0])


@pytest.fixture
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


def reload_until(page: Any, found: Callable[[], bool], what: str) -> None:
    """Reload the page until `found()` (the writer applied the command), within WAIT_S."""
    deadline = time.monotonic() + WAIT_S
    while not found():
        assert time.monotonic() < deadline, f"{what}: not seen within {WAIT_S:.0f} s"
        time.sleep(0.3)
        page.reload()


def test_log_in_take_down_undo_and_read_the_audit(
    link_id: int,
    browser: Any,
    writer: LiveWriter,
    nats_url: str,
    s3_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ADMIN_TOKENS", f"alice:{SECRET}")
    settings = s3_settings(writer.data_dir, s3_env, nats_url=nats_url)
    OUT.mkdir(parents=True, exist_ok=True)
    with live_app(settings) as base:
        public = f"{base}/links/{link_id}"
        assert httpx.get(public).status_code == 200
        w = Watch(browser)
        page = w.page
        try:
            page.goto(f"{base}/admin")
            assert page.url == f"{base}/admin/login"
            page.fill("#token", "not-the-token")
            page.click("button[type=submit]")
            assert "That is not a valid admin token." in page.inner_text("main")
            page.screenshot(path=str(OUT / "console-login-refused.png"), full_page=True)
            page.fill("#token", SECRET)
            page.click("button[type=submit]")
            assert page.url == f"{base}/admin"
            assert "Logged in as alice" in page.inner_text("main")
            (cookie,) = w.context.cookies()
            assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (
                True,
                "Strict",
                "/admin",
            )
            assert SECRET not in cookie["value"]
            page.screenshot(path=str(OUT / "console-queue.png"), full_page=True)

            # take the link down
            page.goto(f"{base}/admin/takedowns")
            page.fill("#td-link", str(link_id))
            page.fill("#td-reason", "court order 42")
            page.click("text=Take down")
            assert f"Link {link_id} is taken down" in page.inner_text("main")
            row = page.locator("tr", has_text="court order 42")
            reload_until(page, lambda: row.count() == 1, "the takedown")
            # the window just began: 7 days less the seconds since (the web's clock and the
            # writer's are read apart, so a page drawn within the same second reads 7 days 0 h)
            text = row.inner_text()
            assert any(f"hidden; undo possible for {w}" in text
                       for w in ("6 days 23 h", "7 days 0 h")), text  # fmt: skip
            assert httpx.get(public).status_code == 404
            page.screenshot(path=str(OUT / "console-takedowns.png"), full_page=True)
            # on a phone the row keeps its secondary text (public lists drop theirs)
            page.set_viewport_size({"width": 390, "height": 844})
            page.reload()
            assert row.locator(".muted.small").first.is_visible()
            page.screenshot(path=str(OUT / "console-takedowns-phone.png"), full_page=True)
            page.set_viewport_size({"width": 1280, "height": 900})

            # undo it within the window
            row.locator("input[name=reason]").fill("appeal granted")
            row.locator("button", has_text="Undo").click()
            assert f"The undo of link {link_id} was sent" in page.inner_text("main")
            reload_until(page, lambda: "undone" in row.inner_text(), "the undo")
            assert httpx.get(public).status_code == 200

            # the audit trail says who, what, when, why
            page.goto(f"{base}/admin/audit")
            lines = [t.split("\t") for t in page.locator("tr.audit-line").all_inner_texts()]
            assert [line[1:6] for line in lines] == [
                ["alice", "undo", f"link {link_id}", "appeal granted", "done"],
                ["alice", "takedown", f"link {link_id}", "court order 42", "done"],
            ]
            page.screenshot(path=str(OUT / "console-audit.png"), full_page=True)
            with page.expect_download() as download:
                page.click("text=CSV")
            saved = Path(download.value.path())
            assert "court order 42" in saved.read_text()

            page.click("text=Log out")
            assert page.url == f"{base}/admin/login?out=1"
            assert w.context.cookies() == []
            assert not w.errors, w.errors
        finally:
            w.close()
