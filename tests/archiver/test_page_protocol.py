"""The page protocol on a real page socket: framing, errors, files, long socket paths."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared import pageclient as pc
from testkit.browser import BrowserHarness
from testkit.httpserver import FixtureServer, Reply, Serve

pytestmark = pytest.mark.integration


@pytest.fixture
def site(serve: Serve) -> FixtureServer:
    return serve({"/p": Reply(b"<html><head><title>T</title></head><body>hello</body></html>")})


@pytest.fixture
def page(browser: BrowserHarness, tmp_path: Path) -> Iterator[pc.PageClient]:
    env = browser.open(tmp_path)
    try:
        with pc.PageClient(env[pc.SOCKET_ENV]) as client:
            yield client
    finally:
        browser.close(tmp_path)


def raw(path: str, *lines: bytes) -> list[dict]:
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(path)
        s.sendall(b"".join(lines))
        f = s.makefile("rb")
        return [json.loads(f.readline()) for _ in lines]


def test_line_protocol_answers_in_order_with_ids(
    browser: BrowserHarness, tmp_path: Path, site: FixtureServer
) -> None:
    env = browser.open(tmp_path)
    try:
        answers = raw(
            env[pc.SOCKET_ENV],
            b'{"id": "a", "op": "state"}\n',
            b"not json\n",
            b'{"id": 3, "op": "launch_missiles"}\n',
            json.dumps({"id": 4, "op": "navigate", "url": f"{site.base}/p"}).encode() + b"\n",
            b'{"id": 5, "op": "evaluate", "expression": "document.title"}\n',
        )
    finally:
        browser.close(tmp_path)
    assert [a["id"] for a in answers] == ["a", None, 3, 4, 5]
    assert answers[0] == {"id": "a", "ok": True, "result": {
        "navigated": False, "navigation": None, "url": None, "unresponsive": False}}  # fmt: skip
    assert answers[1]["error"]["code"] == pc.E_PROTOCOL
    assert answers[2]["error"]["code"] == pc.E_BAD_REQUEST
    assert answers[3]["result"]["status"] == 200
    assert answers[4]["result"] == {"value": "T"}


def test_errors_carry_codes(page: pc.PageClient, site: FixtureServer, tmp_path: Path) -> None:
    page.navigate(f"{site.base}/p", timeout=20)
    with pytest.raises(pc.PageError) as thrown:
        page.evaluate("() => { throw new Error('boom') }")
    assert thrown.value.code == pc.E_SCRIPT and "boom" in thrown.value.message
    with pytest.raises(pc.PageError) as outside:
        page.content("/tmp/elsewhere.html")
    assert outside.value.code == pc.E_BAD_REQUEST
    with pytest.raises(pc.PageError) as slow:
        page.evaluate("() => new Promise(() => {})", timeout=1)
    assert slow.value.code == pc.E_TIMEOUT
    assert page.evaluate("6 * 7") == 42, "the page still answers after a timed-out operation"


def test_files_are_written_where_the_hook_asks(
    page: pc.PageClient, site: FixtureServer, tmp_path: Path
) -> None:
    page.navigate(f"{site.base}/p", timeout=20)
    out = page.content(str(tmp_path / "sub" / ".." / "dom.html"))
    assert out["path"] == str(tmp_path / "dom.html")
    assert "hello" in (tmp_path / "dom.html").read_text() and out["bytes"] > 0


def test_a_long_snapshot_path_still_gets_a_socket(
    browser: BrowserHarness, tmp_path: Path, site: FixtureServer
) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    env = browser.open(deep)
    try:
        assert len(env[pc.SOCKET_ENV]) > 108
        with pc.PageClient(env[pc.SOCKET_ENV]) as client:
            assert client.navigate(f"{site.base}/p", timeout=20)["status"] == 200
    finally:
        browser.close(deep)
    assert not (deep / ".page.sock").exists()


def test_no_socket_means_no_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(pc.SOCKET_ENV, raising=False)
    with pytest.raises(pc.PageError) as thrown:
        pc.PageClient()
    assert thrown.value.code == pc.E_NO_BROWSER


def test_the_client_imports_only_the_standard_library() -> None:
    """Hooks import it; it must cost nothing beyond the interpreter (no pydantic etc.)."""
    code = (
        "import sys; before = set(sys.modules); import shared.pageclient;"
        "print(sorted({m.split('.')[0] for m in set(sys.modules) - before}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(eval(out.stdout)) - {"shared"}
    assert loaded <= sys.stdlib_module_names, loaded - sys.stdlib_module_names


def test_a_list_item_chromium_cannot_print_is_printed_and_the_dom_left_as_it_was(
    page: pc.PageClient, serve: Serve, tmp_path: Path
) -> None:
    """An icon link in a list item whose style sheet did not load (an inline element holding
    only an empty block): Chromium's print never ends on it (services/archiver/printfix.py).
    The PDF is made, and the DOM read afterwards has no trace of the workaround."""
    items = (
        '<li><a href="/a"><div class="logo"></div></a></li>'
        '<li style="color: red"><span><p></p></span></li>'
        "<li>a line of its own</li>"
    )
    site = serve({"/p": Reply(f"<html><body><ul>{items}</ul></body></html>".encode())})
    page.navigate(f"{site.base}/p", timeout=20)
    before = page.evaluate("document.body.innerHTML")
    printed = page.pdf(str(tmp_path / "page.pdf"), timeout=30)
    assert printed["markers_moved"] == 2
    assert (tmp_path / "page.pdf").read_bytes().startswith(b"%PDF")
    assert page.evaluate("document.body.innerHTML") == before


def test_a_navigation_cut_short_keeps_its_record_and_events(
    page: pc.PageClient, serve: Serve
) -> None:
    """An operation whose time runs out while it probes a stuck renderer (a loaded machine
    makes the probe and the record slower than the time kept for them) still leaves the
    navigation's record and its page_unresponsive event, for the hook to write."""
    site = serve({
        "/p": Reply(b"<title>first</title>"),
        "/loop": Reply(b"<html><body><script>for (;;) {}</script></body></html>"),
    })  # fmt: skip
    page.navigate(f"{site.base}/p", timeout=30)  # the page and its proxy are made
    with pytest.raises(pc.PageError) as cut:
        # 1 s: goto gets its least (300 ms), then the 1 s probe of the stuck renderer is cut
        page.navigate(f"{site.base}/loop", timeout=1.0)
    assert cut.value.code == pc.E_TIMEOUT
    nav = page.state(timeout=5)["navigation"]
    assert nav["url"] == f"{site.base}/loop" and not nav["document"]
    assert nav["error"] == {"code": pc.E_TIMEOUT, "message": "navigation cut short"}
    events = page.responses(timeout=5)["events"]
    assert any(e["type"] == "page_unresponsive" for e in events), events
