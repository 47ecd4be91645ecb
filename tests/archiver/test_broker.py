"""The browser broker with a real Chromium: restarts after a crash, a hang, and its memory,
age and capture-count limits; restarts are counted; no process is left behind."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser

from services.archiver.browser import RESTARTS, BrowserBroker, BrowserLimits
from shared import processes as proctree
from testkit.browser import chromium_pids, new_chromium_pids
from testkit.waiting import until

pytestmark = pytest.mark.integration


def restarts(reason: str) -> float:
    return RESTARTS.labels(reason)._value.get()


@pytest.fixture
async def leak_free() -> AsyncIterator[None]:
    before = sorted(chromium_pids())
    yield
    # a bound, not a timing: a restarted browser's processes take past 5 s to end at load 8
    await until(lambda: not new_chromium_pids(before), 20, "no Chromium process leaked")


async def use(broker: BrowserBroker) -> int | None:
    """Open and close one snapshot context; returns the browser's pid."""
    async with broker.context() as ctx:
        page = await ctx.new_page()
        assert await page.evaluate("1 + 1") == 2
    return broker.pid


async def test_a_crashed_browser_is_relaunched(leak_free: None) -> None:
    async with BrowserBroker(BrowserLimits()) as broker:
        first = await use(broker)
        assert first is not None and proctree.exe_name(first).startswith("chromium")
        before = restarts("crash")
        os.kill(first, signal.SIGKILL)
        await until(
            lambda: broker._browser is not None and not broker._browser.is_connected(),
            30,
            "Playwright seeing the browser gone",
        )
        second = await use(broker)
        assert second is not None and second != first
        assert broker.restarts == 1 and restarts("crash") == before + 1


async def test_a_hung_browser_is_killed_by_the_probe_and_relaunched(leak_free: None) -> None:
    limits = BrowserLimits(probe_interval_s=0.3, probe_timeout_s=1.0)
    async with BrowserBroker(limits) as broker:
        first = await use(broker)
        assert first is not None
        before = restarts("hang")
        os.kill(first, signal.SIGSTOP)  # alive but silent: the probe gets no answer
        try:
            # a bound: 1 s of probe, then the kill and Playwright's close, slow at load 8
            await until(lambda: broker.restarts, 30, "the probe restarting the browser")
        finally:
            if proctree.exe_name(first):
                os.kill(first, signal.SIGCONT)
        assert broker.restarts == 1 and restarts("hang") == before + 1
        assert not proctree.exe_name(first), "the hung browser was killed"
        assert await use(broker) not in (None, first)


async def test_a_browser_that_hangs_mid_probe_is_killed_all_the_same(
    leak_free: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The browser stops between the probe's CDP session and its call: the call, and the
    session's detach in its cleanup, are never answered. The probe must not wait for them."""
    limits = BrowserLimits(probe_interval_s=0.3, probe_timeout_s=1.0)
    async with BrowserBroker(limits) as broker:
        first = await use(broker)
        assert first is not None

        async def hangs_midway(browser: Browser) -> int | None:
            cdp = await browser.new_browser_cdp_session()
            os.kill(first, signal.SIGSTOP)
            try:
                await cdp.send("SystemInfo.getProcessInfo")
            finally:
                await cdp.detach()  # unanswered too
            return None

        monkeypatch.setattr(BrowserBroker, "_browser_pid", staticmethod(hangs_midway))
        try:
            await until(lambda: broker.restarts, 30, "the probe restarting the browser")
        finally:
            if proctree.exe_name(first):
                os.kill(first, signal.SIGCONT)
        monkeypatch.undo()
        assert not proctree.exe_name(first), "the hung browser was killed"
        assert await use(broker) not in (None, first)


async def test_a_failing_probe_round_does_not_end_the_probe(
    leak_free: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A surprise in one round (here the memory reading) is logged; the next round runs."""
    limits = BrowserLimits(probe_interval_s=0.1, probe_timeout_s=1.0)
    async with BrowserBroker(limits) as broker:
        first = await use(broker)
        assert first is not None
        readings = 0

        def unreadable(root: int) -> int:
            nonlocal readings
            readings += 1
            raise OSError("smaps_rollup vanished")

        monkeypatch.setattr(proctree, "tree_pss_bytes", unreadable)
        await until(lambda: readings >= 3, 30, "three probe rounds despite the failures")


@pytest.mark.parametrize(
    ("limits", "reason"),
    [
        (BrowserLimits(max_captures=2), "captures"),
        (BrowserLimits(max_pss_bytes=10 * 1024 * 1024, pss_check_every=1), "memory"),
        (BrowserLimits(max_age_s=0.5), "age"),
    ],
)
async def test_limits_restart_the_browser_between_snapshots(
    limits: BrowserLimits, reason: str, leak_free: None
) -> None:
    async with BrowserBroker(limits) as broker:
        before = restarts(reason)
        first = await use(broker)
        await use(broker)
        if reason == "age":
            await until(lambda: broker.age_s() > limits.max_age_s, 30, "the browser past its age")
        third = await use(broker)
        assert third != first
        assert restarts(reason) >= before + 1 and broker.restarts >= 1


async def test_a_limit_restart_waits_for_open_snapshots(leak_free: None) -> None:
    async with BrowserBroker(BrowserLimits(max_captures=1)) as broker:
        async with broker.context() as ctx:
            page = await ctx.new_page()
            waiting = asyncio.create_task(use(broker))  # over the limit: waits for us
            await until(lambda: broker.retiring() == "captures", 30, "the limit seen")
            assert not waiting.done()
            assert await page.evaluate("2 * 21") == 42  # our browser was not pulled away
        assert await waiting is not None and broker.restarts == 1


async def test_the_browser_runs_no_ui_renderers_and_keeps_playwrights_features(
    leak_free: None,
) -> None:
    """Our --disable-features (the last on the command line, the one Chromium keeps) still
    disables everything Playwright's does; and a snapshot's context brings no browser-UI
    page (the omnibox popup WebUI costs a renderer per context)."""
    async with BrowserBroker(BrowserLimits()) as broker, broker.context() as ctx:
        page = await ctx.new_page()
        await page.goto("about:blank")
        pid = broker.pid
        assert pid is not None and broker._browser is not None
        raw = await asyncio.to_thread(Path(f"/proc/{pid}/cmdline").read_bytes)
        argv = raw.decode().split("\0")
        cdp = await broker._browser.new_browser_cdp_session()
        targets = (await cdp.send("Target.getTargets", {"filter": [{}]}))["targetInfos"]
    lists = [a.split("=", 1)[1].split(",") for a in argv if a.startswith("--disable-features=")]
    assert len(lists) >= 1
    assert set(lists[0]) <= set(lists[-1]), set(lists[0]) - set(lists[-1])
    assert [t["url"] for t in targets if t["type"] == "browser_ui"] == []
