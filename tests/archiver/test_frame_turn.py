"""Full-page screenshots take turns in a browser (BrowserBroker.frame_turn): two snapshots'
shots never draw at once, both are taken, and a turn held too long delays a shot by a bounded
time only. The turn itself first, without a browser; then real pages in a real Chromium."""

from __future__ import annotations

import asyncio
import contextlib
import struct
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from services.archiver.browser import BrowserBroker, BrowserLimits
from shared import pageclient as pc
from testkit.browser import BrowserHarness
from testkit.httpserver import FixtureServer, Reply, Serve

TALL = (
    b"<html><body style='margin:0'>" + b"<p style='height:900px'>tall</p>" * 6 + b"</body></html>"
)


async def test_a_turn_is_had_by_one_at_a_time_in_order() -> None:
    broker = BrowserBroker(BrowserLimits())
    order: list[str] = []

    async def shot(name: str) -> bool:
        async with broker.frame_turn(5) as had:
            order.append(f"{name}+")
            await asyncio.sleep(0.05)
            order.append(f"{name}-")
            return had

    assert list(await asyncio.gather(shot("a"), shot("b"), shot("c"))) == [True, True, True]
    assert order == ["a+", "a-", "b+", "b-", "c+", "c-"]


async def test_a_turn_held_too_long_is_waited_out_and_never_leaks() -> None:
    broker = BrowserBroker(BrowserLimits())
    async with broker.frame_turn(1) as first:
        assert first
        async with broker.frame_turn(0.2) as second:
            assert second is False  # waited out: drawn anyway
        waiter = asyncio.ensure_future(broker.frame_turn(30).__aenter__())
        await asyncio.sleep(0.05)
        waiter.cancel()  # a snapshot cancelled while it waits leaves the turn free
        with contextlib.suppress(asyncio.CancelledError):
            await waiter
    async with broker.frame_turn(0.5) as again:
        assert again


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.fixture
def site(serve: Serve) -> FixtureServer:
    return serve({"/tall": Reply(TALL)})


@pytest.fixture
def turns(browser: BrowserHarness) -> Iterator[list[tuple[str, float]]]:
    """Each turn's start and end, as the broker hands them out."""
    broker = browser.broker
    events: list[tuple[str, float]] = []
    real = broker.frame_turn

    @contextlib.asynccontextmanager
    async def recorded(most_s: float) -> AsyncIterator[bool]:
        async with real(most_s) as had:
            events.append(("+" if had else "!", time.monotonic()))
            try:
                yield had
            finally:
                events.append(("-", time.monotonic()))

    broker.frame_turn = recorded  # type: ignore[method-assign]
    try:
        yield events
    finally:
        del broker.frame_turn


@pytest.mark.integration
def test_two_snapshots_screenshots_take_turns_and_both_are_taken(
    browser: BrowserHarness, site: FixtureServer, tmp_path: Path, turns: list[tuple[str, float]]
) -> None:
    dirs = [tmp_path / "a", tmp_path / "b"]
    envs = [browser.open(d) for d in dirs]
    shots: dict[Path, dict] = {}
    try:

        def capture(folder: Path, env: dict[str, str]) -> None:
            with pc.PageClient(env[pc.SOCKET_ENV]) as page:
                page.navigate(f"{site.base}/tall", timeout=20)
                shots[folder] = page.screenshot(str(folder / "screenshot.png"), timeout=20)

        threads = [
            threading.Thread(target=capture, args=(d, e)) for d, e in zip(dirs, envs, strict=True)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        for d in dirs:
            browser.close(d)
    for d in dirs:
        assert shots[d]["height"] >= 5400
        assert png_size(d / "screenshot.png") == (shots[d]["width"], shots[d]["height"])
    kinds = [k for k, _ in turns]
    assert kinds == ["+", "-", "+", "-"], turns  # never two frames at once
    assert turns[1][1] <= turns[2][1]


@pytest.mark.integration
def test_a_turn_never_given_back_delays_a_screenshot_by_a_bounded_time(
    browser: BrowserHarness, site: FixtureServer, tmp_path: Path, turns: list[tuple[str, float]]
) -> None:
    held = asyncio.Event()
    free = asyncio.Event()

    async def hold() -> None:  # another snapshot whose shot never ends
        async with browser.broker.frame_turn(1):
            held.set()
            await free.wait()

    holder = asyncio.run_coroutine_threadsafe(hold(), browser.loop)
    browser.run(held.wait())
    env = browser.open(tmp_path)
    try:
        with pc.PageClient(env[pc.SOCKET_ENV]) as page:
            page.navigate(f"{site.base}/tall", timeout=20)
            # waits a third of its 15 s for the turn, then draws anyway (10 s are left for the
            # shot itself: a loaded CI machine takes seconds)
            shot = page.screenshot(str(tmp_path / "screenshot.png"), timeout=15)
    finally:
        browser.loop.call_soon_threadsafe(free.set)
        holder.result(10)
        browser.close(tmp_path)
    assert png_size(tmp_path / "screenshot.png") == (shot["width"], shot["height"])
    assert [k for k, _ in turns] == ["+", "!", "-", "-"], turns
