"""A login wall, a consent gate or a bot challenge instead of the page: navigate keeps what
the browser saw (the captures run, as evidence) and says partial with the wall's code; an
ordinary page with a sign-in box is no wall. Real archiver browser, pages on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit.browser import BrowserHarness, run_hooks
from testkit.httpserver import FixtureServer, Reply
from testkit.platform_pages import LOGIN_PAGE

pytestmark = pytest.mark.integration
HTML = {"Content-Type": "text/html; charset=utf-8"}
ARTICLE = (
    "<html><head><title>Harbour notes</title></head><body><article>"
    + "<p>Notes about the harbour and its boats, written for the club.</p>" * 40
    + "</article><aside><form><input name=u><input type=password name=p><button>Log in</button>"
    "</form></aside></body></html>"
)
CHALLENGE = (
    "<html><head><title>Just a moment...</title></head><body>Checking your browser</body></html>"
)


@pytest.fixture
def site() -> Iterator[FixtureServer]:
    with FixtureServer() as s:
        s.routes["/post"] = Reply(b"", 302, {"Location": "/accounts/login/?next=/post"})
        s.routes["/accounts/login/"] = Reply(LOGIN_PAGE.encode(), headers=HTML)
        s.routes["/article"] = Reply(ARTICLE.encode(), headers=HTML)
        s.routes["/challenge"] = Reply(CHALLENGE.encode(), headers=HTML)
        yield s


@pytest.mark.parametrize(
    ("path", "status", "code"),
    [
        ("/post", "partial", "E_NAVIGATE_LOGIN_WALL"),
        ("/challenge", "partial", "E_NAVIGATE_BLOCKED"),
        ("/article", "succeeded", None),
    ],
)
async def test_walls_are_partial_and_kept_as_evidence(
    browser: BrowserHarness, site: FixtureServer, tmp_path: Path, path: str, status: str,
    code: str | None,
) -> None:  # fmt: skip
    seen = await run_hooks(browser, f"{site.base}{path}", tmp_path, ["navigate", "screenshot"])
    nav = seen.final["navigate"]
    assert (nav.status, nav.error_code, nav.exit_code) == (status, code, 0)
    assert seen.final["screenshot"].status == "succeeded"
    assert (tmp_path / "screenshot" / "screenshot.png").is_file()
    assert ('"wall"' in (tmp_path / "navigate" / "navigate.json").read_text()) is (code is not None)
