"""The page protocol's operations on a snapshot's page (shared/pageclient.py, plugins/README.md):
one `async (session, request) -> answer` each, in `OPERATIONS`."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from services.archiver import lazywatch, printfix, settlewatch
from services.archiver.pagenavigate import LOAD_STATES, navigate
from services.archiver.pagesession import OpError, PageSession, file_result
from shared import pageclient as proto

Operation = Callable[[PageSession, dict[str, Any]], Awaitable[dict[str, Any]]]


def _number(req: dict[str, Any], name: str, default: float) -> float:
    """A non-negative number argument of an operation."""
    try:
        value = float(req.get(name, default))
    except (TypeError, ValueError) as exc:
        raise OpError(proto.E_BAD_REQUEST, f"{name} must be a number") from exc
    if not value >= 0:
        raise OpError(proto.E_BAD_REQUEST, f"{name} must be >= 0")
    return value


async def state(s: PageSession, req: dict[str, Any]) -> dict[str, Any]:
    """Whether the page was navigated, its navigation record and URL."""
    return {
        "navigated": s.navigation is not None,
        "navigation": s.navigation,
        "url": s.url,
        "unresponsive": s.unresponsive,
    }


async def wait(s: PageSession, req: dict[str, Any]) -> dict[str, Any]:
    """Wait for a load state (`until`) and/or a number of milliseconds (`ms`)."""
    page = await s.live_page()
    until = req.get("until")
    if until:
        if until not in LOAD_STATES:
            raise OpError(proto.E_BAD_REQUEST, f"until must be one of {LOAD_STATES}")
        timeout_ms = max(100.0, float(req.get("timeout") or 30) * 1000 - 200)
        try:
            await page.wait_for_load_state(until, timeout=timeout_ms)
        except PlaywrightTimeout as exc:
            raise OpError(proto.E_TIMEOUT, str(exc).splitlines()[0]) from exc
    ms = float(req.get("ms") or 0)
    if ms > 0:
        await asyncio.sleep(min(ms / 1000, float(req.get("timeout") or 30)))
    return {"url": page.url}


async def settle(s: PageSession, req: dict[str, Any]) -> dict[str, Any]:
    """Wait until the loaded page is quiet for `quiet_ms`: no request in flight (one
    open longer than `settlewatch.LONG_REQUEST_S` counts as a stream), no timer due
    within `horizon_ms` pending, its number of elements unchanged; at most `max_ms`
    (see settlewatch.py). Never an error for a page that does not settle: the answer
    says `settled: false` and what was still pending."""
    page = await s.live_page()
    quiet = _number(req, "quiet_ms", 300) / 1000
    horizon = _number(req, "horizon_ms", 3000)
    deadline = min(
        time.monotonic() + _number(req, "max_ms", 5000) / 1000,
        float(req.get("deadline") or math.inf) - 0.2,
    )
    began, changed = time.monotonic(), s.loaded_at
    elements: int | None = None
    pending: dict[str, int] | None = None
    network = s.network
    while True:
        try:
            seen = await asyncio.wait_for(
                page.evaluate(settlewatch.READ_JS, horizon),
                max(0.05, deadline - time.monotonic()),
            )
        except PlaywrightError as exc:
            if s.crashed:
                raise s.dead_page() from exc
            if time.monotonic() >= deadline or "destroyed" not in str(exc):
                return _settled(False, began, reason=str(exc).splitlines()[0][:200])
            # the page navigated on (a script's redirect): its new document is awaited
            changed, elements = time.monotonic(), None
            await asyncio.sleep(0.1)
            continue
        except TimeoutError:  # the limit came while the page was being read
            if pending is not None:  # what the last reading found still pending
                return _settled(False, began, pending=pending)
            return _settled(False, began, reason="the page did not answer in time")
        now = time.monotonic()
        if seen["elements"] != elements:
            changed = now if elements is not None else changed
            elements = seen["elements"]
        requests = sum(
            1 for t in network.in_flight.values() if now - t < settlewatch.LONG_REQUEST_S
        )
        idle = now - max(changed, network.active_at)
        if not requests and not seen["timers"] and idle >= quiet:
            return _settled(True, began)
        pending = {"requests": requests, "timers": seen["timers"]}
        if now >= deadline:
            return _settled(False, began, pending=pending)
        # quiet so far: look again when the quiet time is up (a request in between is
        # seen by its events); something pending: every 100 ms
        pause = quiet - idle if not requests and not seen["timers"] else 0.1
        await asyncio.sleep(max(0.02, min(pause, deadline - now)))


def _settled(settled: bool, began: float, **detail: Any) -> dict[str, Any]:
    waited = round((time.monotonic() - began) * 1000)
    return {"settled": settled, "waited_ms": waited, **detail}


async def evaluate(s: PageSession, req: dict[str, Any]) -> dict[str, Any]:
    """Run a script in the page; its value."""
    expression = req.get("expression")
    if not isinstance(expression, str):
        raise OpError(proto.E_BAD_REQUEST, "expression must be a string")
    return {"value": await s.evaluate(expression, req.get("arg"))}


async def lazy(s: PageSession, req: dict[str, Any]) -> dict[str, Any]:
    """How the page loads content lazily (see lazywatch.py): elements it handed to an
    IntersectionObserver, its scroll listeners, and its elements marked lazy."""
    return dict(await s.evaluate(lazywatch.READ_JS))


async def content(s: PageSession, req: dict[str, Any]) -> dict[str, Any]:
    """The rendered DOM as HTML into `path`."""
    path = s.out_path(req)
    page = await s.live_page()
    html = await page.content()
    if s.cookies:  # a page may print a session token it was given
        html = s.cookies.scrub(html)
    await asyncio.to_thread(path.write_text, html, "utf-8")
    return await asyncio.to_thread(file_result, path, url=page.url)


FRAME_TURN_WAIT_S = 10.0
"""Longest a screenshot waits for another snapshot's to end before it draws anyway."""


def screenshot_params(
    width: int, height: int, full_page: bool, scale: float = 1.0
) -> dict[str, Any]:
    """`Page.captureScreenshot`'s parameters for a PNG of the page's top `height` CSS pixels,
    `scale` image pixels to a CSS pixel (bench/bench_browser_steps.py takes the same)."""
    return {
        "format": "png",
        "optimizeForSpeed": True,
        "captureBeyondViewport": full_page,
        "clip": {"x": 0, "y": 0, "width": width, "height": max(1, height), "scale": scale},
    }


async def screenshot(s: PageSession, req: dict[str, Any]) -> dict[str, Any]:
    """A PNG of the page (full height up to `max_height` CSS pixels, else the viewport),
    `scale` image pixels to a CSS pixel (0 < scale <= 1: the page is drawn smaller, for
    less CPU and memory; `width` and `height` say the image's size), taken with
    CDP's `Page.captureScreenshot` and `optimizeForSpeed` (fast zlib, about 1/3 of the
    CPU of Playwright's `page.screenshot` for ~25 % larger files; see
    docs/benchmarks.md). `captureBeyondViewport` renders the whole clip at once, so the
    viewport is never resized. The browser's snapshots take turns for it
    (`BrowserBroker.frame_turn`), each waiting at most FRAME_TURN_WAIT_S or a third of the
    time the request has left."""
    path = s.out_path(req)
    page = await s.live_page()
    full_page = bool(req.get("full_page", True))
    max_height = int(req.get("max_height") or 0)
    scale = _number(req, "scale", 1.0)
    if not 0 < scale <= 1:
        raise OpError(proto.E_BAD_REQUEST, "scale must be more than 0 and at most 1")
    cdp = await s.cdp(page)
    metrics = await cdp.send("Page.getLayoutMetrics")
    viewport, size = metrics["cssLayoutViewport"], metrics["cssContentSize"]
    width = int(viewport["clientWidth"])
    page_height = math.ceil(size["height"])
    height = page_height if full_page else int(viewport["clientHeight"])
    clipped = full_page and max_height > 0 and page_height > max_height
    if clipped:
        height = max_height
    deadline = float(req.get("deadline") or time.monotonic() + 30)
    turn_wait = max(0.0, min(FRAME_TURN_WAIT_S, (deadline - time.monotonic()) / 3))
    async with s.broker.frame_turn(turn_wait):
        params = screenshot_params(width, height, full_page, scale)
        shot = await cdp.send("Page.captureScreenshot", params)
    data = base64.b64decode(shot["data"])
    await asyncio.to_thread(path.write_bytes, data)
    return await asyncio.to_thread(
        file_result,
        path,
        width=round(width * scale),
        height=round(height * scale),
        scale=scale,
        page_height=page_height,
        clipped=clipped,
    )


async def pdf(s: PageSession, req: dict[str, Any]) -> dict[str, Any]:
    """The page printed to PDF into `path`, list items Chromium cannot print worked around
    for the time of the print (services/archiver/printfix.py; `markers_moved` says how many)."""
    path = s.out_path(req)
    page = await s.live_page()
    moved = 0
    with contextlib.suppress(OpError):  # a page whose scripts broke the DOM API prints as is
        moved = int(await s.evaluate(printfix.MARK_JS) or 0)
    try:
        await page.pdf(path=path, print_background=True)
    finally:
        if moved:
            with contextlib.suppress(OpError):
                await s.evaluate(printfix.UNMARK_JS)
    return await asyncio.to_thread(file_result, path, markers_moved=moved)


async def traffic(s: PageSession, req: dict[str, Any]) -> dict[str, Any]:
    """Finish the browser WARC (egress/traffic.py) and move it to `path`: every exchange the
    page had so far; none is recorded after. {"path": null} when nothing was recorded."""
    path = s.out_path(req)
    log, proxy = s.traffic, s.proxy
    if log is None or proxy is None:
        return {"path": None, "exchanges": 0, "truncated": 0}
    await proxy.relay.flush()
    done = await log.finish(path)
    if done is None:
        return {"path": None, "exchanges": 0, "truncated": 0}
    return await asyncio.to_thread(
        file_result, path, exchanges=done.exchanges, truncated=done.truncated
    )


async def responses(s: PageSession, req: dict[str, Any]) -> dict[str, Any]:
    """The page's responses and failed requests, the proxy's refusals, failures and cut
    bodies, subresource counts and the event log (cookie values scrubbed)."""
    proxy_log = s.proxy.log if s.proxy is not None else None
    answer = {
        "responses": s.network.responses,
        "refused": proxy_log.refused if proxy_log else [],
        "failed": proxy_log.failed if proxy_log else [],
        "truncated": proxy_log.truncated if proxy_log else [],
        "subresources": s.network.subresources,
        "failed_subresources": s.network.failed_subresources,
        "events": s.events,
    }
    return s.cookies.scrub_data(answer) if s.cookies else answer


OPERATIONS: dict[str, Operation] = {
    "state": state,
    "navigate": navigate,
    "wait": wait,
    "settle": settle,
    "evaluate": evaluate,
    "lazy": lazy,
    "content": content,
    "screenshot": screenshot,
    "pdf": pdf,
    "traffic": traffic,
    "responses": responses,
}
"""Every operation of shared.pageclient.OPS, by name."""
