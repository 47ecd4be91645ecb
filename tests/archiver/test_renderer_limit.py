"""A page whose renderer grows past the per-page memory limit, against the archiver's real
browser: the watchdog stops that renderer while the page loads, its snapshot ends with
E_NAVIGATE_RESOURCE_LIMIT, a snapshot open at the same time in the same browser is
untouched, the browser is not restarted, and no Chromium process is left behind. A page
operation that grows it (a script) answers E_PAGE_RESOURCE_LIMIT, and so do later ones."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.archiver.browser import RENDERER_KILLS, BrowserLimits
from services.archiver.renderers import RendererWatch
from shared import processes as proctree
from shared.pageclient import E_RESOURCE_LIMIT, SOCKET_ENV, PageClient, PageError
from testkit.browser import (
    BrowserHarness,
    Collect,
    assert_no_chromium_leak,
    chromium_pids,
    run_hooks,
)
from tests.archiver.hostile_site import HostileSite

MB = 1024 * 1024
LIMIT = 200 * MB
"""Several times what the test's ordinary page needs (~30-60 MB), a fraction of what the
endless document would take."""
HOOKS = ["navigate", "screenshot", "dom"]
TIMEOUTS = {"NAVIGATE_TIMEOUT": "60", "SCREENSHOT_TIMEOUT": "30", "DOM_TIMEOUT": "30"}
"""Generous: the kill, not a timeout, must end the hostile navigation on a loaded machine."""


def kills() -> float:
    return RENDERER_KILLS._value.get()


@pytest.fixture(scope="module")
def harness() -> Iterator[BrowserHarness]:
    before = chromium_pids()
    h = BrowserHarness(BrowserLimits(max_renderer_bytes=LIMIT))
    try:
        yield h
    finally:
        h.stop()
        assert_no_chromium_leak(before)


@pytest.fixture(scope="module")
def site() -> Iterator[HostileSite]:
    with HostileSite("127.0.0.2") as s:
        yield s


def navigation(out: Path) -> dict[str, object]:
    nav: dict[str, object] = json.loads((out / "navigate" / "navigate.json").read_text())
    return nav


@pytest.mark.integration
async def test_a_page_past_the_renderer_limit_is_stopped_and_nothing_else(
    harness: BrowserHarness, site: HostileSite, tmp_path: Path
) -> None:
    browser = harness.broker.pid
    before = kills()

    async def release_after_the_kill() -> None:
        """/held answers once the hostile renderer is gone: the other snapshot's page is
        open (its request is waiting) while the kill happens, and is used after it."""
        for _ in range(1200):
            if kills() > before:
                break
            await asyncio.sleep(0.1)
        site.release.set()

    endless, held = f"{site.base}/endless-markup", f"{site.base}/held"
    hostile, other, _ = await asyncio.gather(
        run_hooks(harness, endless, tmp_path / "hostile", HOOKS, page=None, **TIMEOUTS),
        run_hooks(harness, held, tmp_path / "other", HOOKS, page=None, **TIMEOUTS),
        release_after_the_kill(),
    )

    assert kills() == before + 1
    nav = hostile.final["navigate"]
    assert (nav.status, nav.error_code) == ("failed", "E_NAVIGATE_RESOURCE_LIMIT"), nav
    assert nav.exit_code == 0  # final: the same page would grow the same way again
    assert "BROWSER_MAX_RENDERER_MB" in (nav.output_str or "")
    assert hostile.final["screenshot"].error_code == "E_SCREENSHOT_DEPENDENCY"
    events = navigation(tmp_path / "hostile")["events"]
    assert isinstance(events, list)
    (limit_event,) = [e for e in events if e["type"] == "renderer_memory_limit"]
    assert limit_event["mib"] > LIMIT >> 20 and limit_event["limit_mib"] == LIMIT >> 20
    assert not [e for e in events if e["type"] == "page_crashed"]

    assert {p: r.status for p, r in other.final.items()} == dict.fromkeys(HOOKS, "succeeded")
    assert "all fine" in (tmp_path / "other" / "dom" / "dom.html").read_text()
    assert harness.broker.restarts == 0 and harness.broker.pid == browser
    assert harness.run(harness.broker.probe())

    again: Collect = await run_hooks(harness, f"{site.base}/ok", tmp_path / "after", HOOKS)
    assert {p: r.status for p, r in again.final.items()} == dict.fromkeys(HOOKS, "succeeded")


GROW_JS = "() => { const a = []; for (;;) a.push(new Float64Array(1 << 17).fill(1)); }"
"""A script that fills memory (1 MiB arrays outside V8's heap, so V8's own limit is not
what stops it) until something does."""


@pytest.mark.integration
async def test_an_operation_that_grows_the_renderer_answers_resource_limit(
    harness: BrowserHarness, site: HostileSite, tmp_path: Path
) -> None:
    browser, before = harness.broker.pid, kills()
    env = harness.open(tmp_path)

    def operations() -> tuple[dict[str, object], PageError, PageError, dict[str, object]]:
        with PageClient(env[SOCKET_ENV]) as page:
            nav = page.navigate(f"{site.base}/ok", timeout=30)
            with pytest.raises(PageError) as grown:
                page.evaluate(GROW_JS, timeout=60)
            with pytest.raises(PageError) as later:
                page.screenshot(str(tmp_path / "shot.png"), timeout=30)
            return nav, grown.value, later.value, page.responses()

    try:
        nav, grown, later, log = await asyncio.to_thread(operations)
    finally:
        harness.close(tmp_path)
    assert nav["error"] is None and nav["document"]
    assert grown.code == later.code == E_RESOURCE_LIMIT, (grown, later)
    assert "BROWSER_MAX_RENDERER_MB" in grown.message
    events = log["events"]
    assert isinstance(events, list)
    assert [e["type"] for e in events] == ["renderer_memory_limit"]
    assert kills() == before + 1
    assert harness.broker.restarts == 0 and harness.broker.pid == browser


GROW = "x = b'x' * %d; import time; time.sleep(60)"


def test_the_watch_finds_and_kills_renderers_past_the_limit_only() -> None:
    """Real processes standing in for renderers (the flag in their command line), below
    this process: the big one is found and killed, the small one and others are left."""
    args = [sys.executable, "-c"]
    big = os.spawnv(os.P_NOWAIT, sys.executable, [*args, GROW % (64 * MB), "--type=renderer"])
    small = os.spawnv(os.P_NOWAIT, sys.executable, [*args, GROW % MB, "--type=renderer"])
    other = os.spawnv(os.P_NOWAIT, sys.executable, [*args, GROW % (64 * MB), "--type=gpu"])
    try:
        watch = RendererWatch(32 * MB)
        for _ in range(400):  # until the children have started and allocated
            over = watch.over_limit(os.getpid())
            grown = over and over[0][1] > 64 * MB
            if grown and set(watch.renderers(os.getpid())) == {big, small}:
                break
            time.sleep(0.05)
        assert [pid for pid, _ in over] == [big]
        assert set(watch.renderers(os.getpid())) == {big, small}
        kill = watch.kill(big, over[0][1])
        assert kill.pid == big and kill.bytes > 64 * MB and kill.limit == 32 * MB
        assert os.waitpid(big, 0)[1] != 0
        assert proctree.exe_name(small) and proctree.exe_name(other)
    finally:
        for pid in (big, small, other):
            proctree.kill_tree(pid)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


BECOME_RENDERER = (
    "import os, sys, time; time.sleep(0.5); "
    "os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(30)', "
    "'--type=renderer'])"
)


def test_a_process_that_becomes_a_renderer_after_a_scan_is_still_found() -> None:
    """A renderer is first a fork of the zygote (or here, of this process) and only then
    shows `--type=renderer`: a scan in between must not settle it as something else."""
    late = os.spawnv(os.P_NOWAIT, sys.executable, [sys.executable, "-c", BECOME_RENDERER])
    try:
        watch = RendererWatch(32 * MB)
        assert late not in watch.renderers(os.getpid())  # not yet
        for _ in range(200):
            if late in watch.renderers(os.getpid()):
                break
            time.sleep(0.05)
        assert late in watch.renderers(os.getpid())
    finally:
        proctree.kill_tree(late)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(late, 0)
