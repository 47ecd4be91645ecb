"""A page that opts out with X-No-Archive (header or meta) is declined by navigate, and the
browser captures that read navigate (adjust, screenshot, PDF, DOM) are skipped: nothing of it
is written for upload. Real archiver browser, fixture pages on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit.browser import BrowserHarness, run_hooks
from testkit.httpserver import FixtureServer, Reply

pytestmark = pytest.mark.integration
PAGE = b"<html><head><title>Private</title></head><body><h1>private</h1></body></html>"
CAPTURES = ["adjust", "screenshot", "pdf", "dom"]
HTML = {"Content-Type": "text/html"}
SABOTAGE = b"<script>document.querySelectorAll = () => { throw Error('no'); };</script></html>"


@pytest.fixture
def site() -> Iterator[FixtureServer]:
    with FixtureServer() as s:
        s.routes["/header"] = Reply(PAGE, headers={**HTML, "X-No-Archive": "yes"})
        s.routes["/meta"] = Reply(
            b'<html><head><META NAME="X-No-Archive" CONTENT="Yes"></head><p>private</p></html>',
            headers=HTML,
        )
        s.routes["/scripted"] = Reply(
            b"<html><head><script>const m = document.createElement('meta');"
            b"m.httpEquiv = 'X-No-Archive'; m.content = '1'; document.head.append(m);"
            b"</script></head><p>private</p></html>",
            headers=HTML,
        )
        # the page's own script breaks the one navigate runs to list the meta tags
        s.routes["/sabotaged"] = Reply(
            b'<html><head><meta name="x-no-archive" content="1"></head><p>private</p>' + SABOTAGE,
            headers=HTML,
        )
        s.routes["/sabotaged-ok"] = Reply(b"<html><p>fine</p>" + SABOTAGE, headers=HTML)
        s.routes["/allowed"] = Reply(PAGE, headers={**HTML, "X-No-Archive": "no"})
        yield s


def files_under(out_dir: Path) -> list[str]:
    return sorted(str(p.relative_to(out_dir)) for p in out_dir.rglob("*") if p.is_file())


@pytest.mark.parametrize("path", ["/header", "/meta", "/scripted", "/sabotaged"])
async def test_an_opted_out_page_is_declined_and_no_capture_is_stored(
    browser: BrowserHarness, site: FixtureServer, tmp_path: Path, path: str
) -> None:
    out = tmp_path / "out"
    seen = await run_hooks(browser, f"{site.base}{path}", out, ["navigate", *CAPTURES, "fetch"])
    nav = seen.final["navigate"]
    assert (nav.status, nav.error_code, nav.exit_code) == ("failed", "E_NAVIGATE_DECLINED", 0)
    assert "declined" in nav.output_str
    assert nav.retry_at is None
    skipped = {k: (r.status, r.error_code) for k, r in seen.final.items() if k != "navigate"}
    for key, (status, code) in skipped.items():
        if key == "fetch":
            continue
        assert status == "skipped" and code is not None and code.endswith("_DEPENDENCY"), key
    assert {"screenshot", "pdf", "dom"} <= skipped.keys()
    # the hooks' own stderr logs (the reason it declined) are all that is left to upload;
    # the plain-HTTP fetch sees the raw page, without the meta a script adds
    kept = [f for f in files_under(out) if not f.endswith(".stderr.log")]
    if path == "/scripted":
        kept = [f for f in kept if not f.startswith("fetch/")]
    else:
        assert skipped["fetch"] == ("failed", "E_FETCH_DECLINED")
    assert kept == [], kept


async def test_an_explicit_no_and_the_setting_let_the_page_be_captured(
    browser: BrowserHarness, site: FixtureServer, tmp_path: Path
) -> None:
    seen = await run_hooks(browser, f"{site.base}/allowed", tmp_path / "a", ["navigate", "dom"])
    assert seen.final["navigate"].status == "succeeded"
    assert seen.final["dom"].status == "succeeded"
    seen = await run_hooks(browser, f"{site.base}/sabotaged-ok", tmp_path / "s", ["navigate"])
    assert seen.final["navigate"].status == "succeeded", seen.final["navigate"]
    assert not (tmp_path / "s" / "navigate" / "meta-check.html").exists()
    seen = await run_hooks(
        browser, f"{site.base}/header", tmp_path / "b", ["navigate", "dom"],
        FETCH_RESPECT_NO_ARCHIVE="false",
    )  # fmt: skip
    assert seen.final["navigate"].status == "succeeded"
    assert (tmp_path / "b" / "navigate" / "navigate.json").is_file()
    assert (tmp_path / "b" / "dom" / "dom.html").is_file()
