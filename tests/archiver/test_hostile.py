"""Hostile pages against the archiver's real browser: each ends with a clear status and
error code within its timeouts, the broker stays healthy, and no Chromium process leaks.

Sizes are real (100 MB body, a gzip bomb of 200 MB); the byte cap and the timeouts are
shrunk through settings so the suite stays quick. The DOM has 100 000 nodes and a page opens
10 tabs in `make test`, a million nodes and 50 tabs with `make hostile-full`
(DLA_HOSTILE_FULL=1): the same code paths, a fraction of the time on a loaded machine (50
tabs opened and closed took ~23 s)."""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from services.archiver.browser import BrowserLimits
from services.archiver.egress import EgressPolicy
from shared.targets import IpAddress, refused_address
from testkit.browser import (
    TEST_BROWSER,
    BrowserHarness,
    Collect,
    assert_no_chromium_leak,
    chromium_pids,
    run_hooks,
)
from tests.archiver.hostile_site import HostileSite

pytestmark = pytest.mark.integration
HOOKS = ["navigate", "screenshot", "dom"]
FAST = {"NAVIGATE_TIMEOUT": "20", "SCREENSHOT_TIMEOUT": "20", "DOM_TIMEOUT": "20"}
"""Generous: a loaded machine must not fail the cases expected to succeed."""
STUCK = "8"
"""NAVIGATE_TIMEOUT of the cases that must time out (endless script, dripping body): 2 s of it
are kept for the probe and the record (pagenavigate.record_margin_ms), which took past the
1.3 s an op of 4 s keeps at load 20."""
PUBLIC_STAND_IN = ipaddress.ip_address("127.0.0.2")
NODES = 1_000_000 if os.environ.get("DLA_HOSTILE_FULL") else 100_000
TABS = 50 if os.environ.get("DLA_HOSTILE_FULL") else 10


def production_policy() -> EgressPolicy:
    """Production refusal rules, with 127.0.0.2 standing in for a public web server."""

    def refuse(ip: IpAddress) -> bool:
        return ip != PUBLIC_STAND_IN and refused_address(ip)

    return EgressPolicy(allow_private=False, refuse=refuse)


@pytest.fixture(scope="module")
def leak_check() -> Iterator[list[int]]:
    """Chromium processes of this test process before the module; checked after it."""
    before = chromium_pids()
    yield before
    assert_no_chromium_leak(before)


@pytest.fixture(scope="module")
def harness(leak_check: list[int]) -> Iterator[BrowserHarness]:
    h = BrowserHarness()
    try:
        yield h
    finally:
        h.stop()


@pytest.fixture(scope="module")
def internal() -> Iterator[HostileSite]:
    """An "internal" server on 127.0.0.1 that production capture must never reach."""
    with HostileSite("127.0.0.1") as s:
        yield s


@pytest.fixture(scope="module")
def site(internal: HostileSite) -> Iterator[HostileSite]:
    with HostileSite("127.0.0.2", other=internal.base) as s:
        yield s


def navigation(out: Path) -> dict[str, Any]:
    return json.loads((out / "navigate" / "navigate.json").read_text())


async def capture(harness: BrowserHarness, url: str, out: Path, **kw: Any) -> Collect:
    return await run_hooks(harness, url, out, HOOKS, page=kw.pop("page", None), **{**FAST, **kw})


def files_named(root: Path, name: str) -> list[Path]:
    return list(root.rglob(name))


def outcome(seen: Collect, plugin: str) -> tuple[str, str | None]:
    r = seen.final[plugin]
    return r.status, r.error_code


async def test_endless_script(harness: BrowserHarness, site: HostileSite, tmp_path: Path) -> None:
    seen = await capture(harness, f"{site.base}/loop", tmp_path, NAVIGATE_TIMEOUT=STUCK)
    assert outcome(seen, "navigate") == ("failed", "E_NAVIGATE_TIMEOUT")
    assert seen.final["navigate"].exit_code == 1  # hard: retried later
    assert outcome(seen, "screenshot") == ("skipped", "E_SCREENSHOT_DEPENDENCY")
    assert outcome(seen, "dom") == ("skipped", "E_DOM_DEPENDENCY")
    assert any(e["type"] == "page_unresponsive" for e in navigation(tmp_path)["events"])


async def test_dialogs_are_dismissed(
    harness: BrowserHarness, site: HostileSite, tmp_path: Path
) -> None:
    seen = await capture(harness, f"{site.base}/dialogs", tmp_path)
    assert outcome(seen, "navigate") == ("succeeded", None)
    kinds = [e["dialog"] for e in navigation(tmp_path)["events"] if e["type"] == "dialog_dismissed"]
    assert kinds == ["alert", "prompt", "confirm"]
    assert "after dialogs" in (tmp_path / "dom" / "dom.html").read_text()


async def test_endless_redirects(
    harness: BrowserHarness, site: HostileSite, tmp_path: Path
) -> None:
    seen = await capture(harness, f"{site.base}/redirect/0", tmp_path)
    assert outcome(seen, "navigate") == ("failed", "E_NAVIGATE_REDIRECTS")
    assert outcome(seen, "screenshot") == ("skipped", "E_SCREENSHOT_DEPENDENCY")


async def test_redirect_to_loopback_is_refused_in_production(
    harness: BrowserHarness, site: HostileSite, internal: HostileSite, tmp_path: Path
) -> None:
    seen = await capture(harness, f"{site.base}/to-other", tmp_path,
                         page={"policy": production_policy()})  # fmt: skip
    assert outcome(seen, "navigate") == ("failed", "E_NAVIGATE_REFUSED")
    nav = navigation(tmp_path)
    assert nav["redirects"][0]["status"] == 302 and not nav["document"]
    assert nav["refused"][0]["url"] == f"{internal.base}/secret"
    assert outcome(seen, "screenshot") == ("skipped", "E_SCREENSHOT_DEPENDENCY")
    assert internal.requests == [], "the internal server was never reached"


async def test_subresource_on_loopback_is_refused_in_production(
    harness: BrowserHarness, site: HostileSite, internal: HostileSite, tmp_path: Path
) -> None:
    seen = await capture(harness, f"{site.base}/img-other", tmp_path,
                         page={"policy": production_policy()})  # fmt: skip
    assert outcome(seen, "navigate") == ("succeeded", None)
    assert [r["url"] for r in navigation(tmp_path)["refused"]] == [f"{internal.base}/secret.png"]
    assert internal.requests == []


async def test_dripping_body(harness: BrowserHarness, site: HostileSite, tmp_path: Path) -> None:
    seen = await capture(harness, f"{site.base}/drip", tmp_path, NAVIGATE_TIMEOUT=STUCK)
    assert outcome(seen, "navigate") == ("failed", "E_NAVIGATE_TIMEOUT")


@pytest.mark.parametrize("path", ["/huge", "/bomb"])
async def test_body_over_the_byte_cap(
    harness: BrowserHarness, site: HostileSite, tmp_path: Path, path: str
) -> None:
    seen = await capture(harness, f"{site.base}{path}", tmp_path,
                         page={"max_response_bytes": 4 * 1024 * 1024})  # fmt: skip
    assert outcome(seen, "navigate") == ("failed", "E_NAVIGATE_TOO_LARGE")
    nav = navigation(tmp_path)
    assert nav["truncated"]
    # the cut ends the navigation at once (Chromium would leave the document loading, with
    # no load event, until the navigation's timeout)
    assert nav["error"]["code"] == "E_PAGE_TRUNCATED", nav["error"]


@pytest.fixture(scope="module")
def roomy_harness(leak_check: list[int]) -> Iterator[BrowserHarness]:
    """A browser whose renderer limit leaves room for a huge DOM: 100 000 nodes take the
    renderer to ~300 MB during the full-page screenshot, at the default limit (300 MB) one run
    in three was stopped; a million (`make hostile-full`) past 2 GiB (2151 MiB, either
    browser). What the limit does is tested in test_renderer_limit.py; here, that the capture
    copes with the node count."""
    h = BrowserHarness(BrowserLimits(executable=TEST_BROWSER, max_renderer_bytes=4096 << 20))
    try:
        yield h
    finally:
        h.stop()


async def test_million_nodes(
    roomy_harness: BrowserHarness, site: HostileSite, tmp_path: Path
) -> None:
    timeouts = {k: "120" for k in FAST} if NODES > 100_000 else {}
    seen = await capture(roomy_harness, f"{site.base}/million?n={NODES}", tmp_path, **timeouts)
    assert outcome(seen, "navigate") == ("succeeded", None)
    assert outcome(seen, "screenshot") == ("succeeded", None)
    assert outcome(seen, "dom") == ("succeeded", None)
    assert (tmp_path / "dom" / "dom.html").read_text().count("<b></b>") == NODES


@pytest.mark.parametrize(("path", "count"), [("/popups", 2), (f"/tabs?n={TABS}", TABS)])
async def test_popups_and_tabs_are_closed(
    harness: BrowserHarness, site: HostileSite, tmp_path: Path, path: str, count: int
) -> None:
    # room, not a timing: 50 tabs opened and closed took past FAST's 20 s at load 8
    seen = await capture(harness, f"{site.base}{path}", tmp_path, NAVIGATE_SETTLE_MS="500",
                         NAVIGATE_TIMEOUT="90")  # fmt: skip
    assert outcome(seen, "navigate") == ("succeeded", None)
    closed = [e for e in navigation(tmp_path)["events"] if e["type"] == "popup_closed"]
    assert len(closed) == count
    assert outcome(seen, "screenshot") == ("succeeded", None)


async def test_downloads_are_refused(
    harness: BrowserHarness, site: HostileSite, tmp_path: Path
) -> None:
    seen = await capture(harness, f"{site.base}/file.bin", tmp_path / "direct")
    assert outcome(seen, "navigate") == ("failed", "E_NAVIGATE_DOWNLOAD")
    seen = await capture(harness, f"{site.base}/download-link", tmp_path / "link",
                         NAVIGATE_SETTLE_MS="300")  # fmt: skip
    assert outcome(seen, "navigate") == ("succeeded", None)
    events = navigation(tmp_path / "link")["events"]
    assert [e["type"] for e in events] == ["download_refused"]
    assert not files_named(tmp_path, "file.bin")


async def test_the_broker_is_still_healthy(
    harness: BrowserHarness, site: HostileSite, tmp_path: Path
) -> None:
    seen = await capture(harness, f"{site.base}/ok", tmp_path)
    assert {p: r.status for p, r in seen.final.items()} == dict.fromkeys(HOOKS, "succeeded")
    assert harness.run(harness.broker.probe())
