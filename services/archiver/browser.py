"""The browser broker: one warm Chromium per archiver, a fresh context per snapshot.

It launches Debian's Chromium (its headless shell by default, settings.BROWSER_EXECUTABLE)
through Playwright (async API) on first use and keeps it.
Each snapshot gets its own browser context (own cookies, storage, cache, egress proxy),
closed when the snapshot ends. The browser is restarted when it

- crashed (Playwright reports it disconnected),
- hangs (the health probe, `SystemInfo.getProcessInfo` over CDP, gets no answer in time),
- passed a memory limit (PSS of the browser's process tree, checked every few captures),
- passed its age or capture-count limit.

While snapshots are open, a watchdog (renderers.py) reads each renderer's memory every
`renderer_check_s` and kills a renderer past `max_renderer_bytes`: that page crashes, its
snapshot claims the kill (`claim_renderer_kill`) and answers `E_PAGE_RESOURCE_LIMIT`; the
browser and the other snapshots' pages (other contexts, so other renderers) go on.
Counted in `dla_archiver_renderer_kills_total`.

Full-page screenshots take turns (`frame_turn`): a 1280 x 16,000 frame is drawn, read back
and copied in the GPU and browser processes, ~150 MB of fresh memory for the moment of the
shot, so two at once raised the stack's peak by as much (docs/benchmarks.md).

A restart for memory, age or count waits until the snapshots using the browser have ended
(new snapshots wait meanwhile); a crash or a hang kills it at once (their snapshots fail,
hard, and are retried). Restarts are counted in `dla_archiver_browser_restarts_total{reason}`.
Before each launch, profiles left by browsers that did not close are removed (profiles.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from playwright.async_api import Browser, BrowserContext, Playwright, async_playwright
from prometheus_client import Counter, Gauge

from services.archiver import profiles
from services.archiver.egress.interception import Interceptor
from services.archiver.renderers import RendererKill, RendererWatch
from services.archiver.settings import BROWSER_EXECUTABLE
from shared import processes

log = logging.getLogger(__name__)

PLAYWRIGHT_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync", "DestroyProfileOnBrowserClose", "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable", "LensOverlay", "MediaRouter", "PaintHolding",
    "ThirdPartyStoragePartitioning", "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin", "OptimizationHints", "NetworkTimeServiceQuerying", "AimEnabled",
    "PreconnectToSearch", "msForceBrowserSignIn", "msEdgeUpdateLaunchServicesPreferredVersion",
)  # fmt: skip
"""The features Playwright's own launch disables. Chromium keeps only the last
`--disable-features` of its command line, so ours must repeat them (tests/archiver/
test_broker.py checks this list still covers Playwright's after an upgrade)."""
OWN_DISABLED_FEATURES = (
    "Translate",
    # Chromium's headless mode is the whole browser: every context gets a window whose
    # omnibox popup is a WebUI page preloaded in a renderer of its own, ~0.9 CPU-s a snapshot
    "WebUIOmniboxPopup",
    "WebUIOmniboxAimPopup",
    "PreloadTopChromeWebUI",
)
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
    "--disable-features=" + ",".join(PLAYWRIGHT_DISABLED_FEATURES + OWN_DISABLED_FEATURES),
    "--disable-site-isolation-trials",
)
"""PLATFORM.md's flags, plus: /dev/shm is small in containers; no QUIC (every request goes
through the egress proxy); no translate, no browser-UI WebUI renderers; no site isolation,
so a page's cross-site frames share its renderer (one renderer per page, which the renderer
memory limit bounds; contexts never share renderers either way)."""

RESTART_REASONS = ("crash", "hang", "memory", "age", "captures", "context-close")
RESTARTS = Counter("dla_archiver_browser_restarts_total", "Browser restarts by reason", ["reason"])
for _reason in RESTART_REASONS:
    RESTARTS.labels(_reason)
LAUNCHES = Counter("dla_archiver_browser_launches_total", "Browser launches (first included)")
CONTEXTS = Gauge("dla_archiver_browser_contexts", "Browser contexts (snapshots) open now")
PSS = Gauge("dla_archiver_browser_pss_bytes", "PSS of the browser's process tree at the last check")
RENDERER_KILLS = Counter(
    "dla_archiver_renderer_kills_total", "Renderers stopped past the renderer memory limit"
)
RENDERER_MAX = Gauge(
    "dla_archiver_renderer_max_bytes", "Memory of the largest renderer at the last check"
)


class BrowserUnavailable(Exception):
    """The browser could not be launched or died."""


@dataclass
class BrowserLimits:
    """When to restart the browser, and how long its steps may take."""

    executable: str = BROWSER_EXECUTABLE
    max_pss_bytes: int = 1500 * 1024 * 1024
    max_age_s: float = 3600.0
    max_captures: int = 1000
    pss_check_every: int = 10
    probe_interval_s: float = 30.0
    probe_timeout_s: float = 10.0
    launch_timeout_s: float = 30.0
    close_timeout_s: float = 10.0
    max_renderer_bytes: int = 300 * 1024 * 1024
    """A renderer (one page) past this is killed while it loads (0: no limit)."""
    renderer_check_s: float = 0.5
    renderer_hot_check_s: float = 0.1
    """Check interval while a renderer is past half the limit (known renderers only)."""
    renderer_claim_s: float = 10.0
    """How long a kill waits for its crashed page to claim it."""
    extra_ca_file: str | None = None
    """PEM roots the egress proxy trusts beside the system's (egress/interception.py)."""


class BrowserBroker:
    """Owns Playwright and the browser; lends contexts to snapshots."""

    def __init__(self, limits: BrowserLimits) -> None:
        self.limits = limits
        self._pw: Playwright | None = None
        self._browser: Browser | None = None
        self._pid: int | None = None
        self._launched_at = 0.0
        self._captures = 0
        self._active = 0
        self._retire: str | None = None
        self._cond = asyncio.Condition()
        self._probe: asyncio.Task[None] | None = None
        self._watchdog: asyncio.Task[None] | None = None
        self._watch = RendererWatch(limits.max_renderer_bytes)
        self._kills: list[RendererKill] = []
        self._frames = asyncio.Lock()
        self._closed = False
        self.restarts = 0
        self.interceptor = Interceptor(limits.extra_ca_file)
        """The archiver's own CA: the snapshots' egress proxies end the browser's TLS with
        its leaves, which this browser is launched to accept (and nothing else more)."""

    @property
    def pid(self) -> int | None:
        """PID of the browser's main process (None when not running)."""
        return self._pid if self._browser is not None else None

    async def __aenter__(self) -> BrowserBroker:
        self._probe = asyncio.create_task(self._probe_loop(), name="browser-probe")
        if self.limits.max_renderer_bytes > 0:
            self._watchdog = asyncio.create_task(self._renderer_loop(), name="renderer-watch")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def warm(self) -> None:
        """Launch the browser now rather than for the first snapshot."""
        async with self._cond:
            if self._browser is None:
                await self._launch()

    async def close(self) -> None:
        """Stop the probe, the browser and Playwright."""
        self._closed = True
        for task in (self._probe, self._watchdog):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self._stop_browser()
        if self._pw is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._pw.stop(), self.limits.close_timeout_s)
            self._pw = None
        self.interceptor.close()

    @contextlib.asynccontextmanager
    async def context(self, **options: Any) -> AsyncIterator[BrowserContext]:
        """A fresh browser context for one snapshot (closed on exit)."""
        browser = await self._acquire()
        ctx: BrowserContext | None = None
        try:
            ctx = await asyncio.wait_for(
                browser.new_context(**options), self.limits.launch_timeout_s
            )
            yield ctx
        finally:
            if ctx is not None:
                try:
                    await asyncio.wait_for(ctx.close(), self.limits.close_timeout_s)
                except Exception as exc:  # a context that cannot close: the browser is sick
                    if browser.is_connected():
                        log.warning("browser context did not close (%s): restarting", exc)
                        await self._kill("context-close")
            await self._release()

    async def _acquire(self) -> Browser:
        async with self._cond:
            while True:
                if self._closed:
                    raise BrowserUnavailable("the broker is closed")
                if self._browser is not None and not self._browser.is_connected():
                    await self._drop("crash")
                if self._browser is not None and self._retire is None:
                    self._check_age_and_count()
                if self._retire is not None and self._active == 0:
                    reason = self._retire
                    await self._stop_browser()
                    self._count_restart(reason)
                if self._retire is None or self._browser is None:
                    break
                await self._cond.wait()
            if self._browser is None:
                await self._launch()
            assert self._browser is not None
            self._active += 1
            self._captures += 1
            CONTEXTS.set(self._active)
            return self._browser

    async def _release(self) -> None:
        async with self._cond:
            self._active -= 1
            CONTEXTS.set(self._active)
            check = self._captures % max(1, self.limits.pss_check_every) == 0
            self._cond.notify_all()
        if check:
            await self.check_memory()

    def age_s(self) -> float:
        """Seconds since the running browser was launched (0 when none runs)."""
        return time.monotonic() - self._launched_at if self._browser is not None else 0.0

    def retiring(self) -> str | None:
        """Why the running browser is to be replaced once its open snapshots end, if it is."""
        return self._retire

    def _check_age_and_count(self) -> None:
        if self._captures >= self.limits.max_captures:
            self._retire = "captures"
        elif self.age_s() >= self.limits.max_age_s:
            self._retire = "age"

    def _count_restart(self, reason: str) -> None:
        self.restarts += 1
        RESTARTS.labels(reason).inc()
        log.info("browser restart (%s)", reason)

    async def check_memory(self) -> int:
        """Measure the browser tree's PSS; past the limit, retire the browser. Returns bytes."""
        pid = self.pid
        if pid is None:
            return 0
        pss = await asyncio.to_thread(processes.tree_pss_bytes, pid)
        PSS.set(pss)
        if pss > self.limits.max_pss_bytes and self._retire is None:
            log.info("browser PSS %d MB over the limit: retiring it", pss >> 20)
            self._retire = "memory"
        return pss

    async def check_renderers(self, rescan: bool = True) -> list[RendererKill]:
        """Kill each renderer past the limit; returns the kills (see renderers.py)."""
        pid = self.pid
        if pid is None:
            return []
        over = await asyncio.to_thread(self._watch.over_limit, pid, rescan)
        RENDERER_MAX.set(self._watch.largest)
        if self.pid != pid:
            return []  # the browser was replaced meanwhile
        kills = [self._watch.kill(rpid, size) for rpid, size in over]
        for kill in kills:  # recorded before any crash event can reach this loop
            log.warning("renderer %d: %s", kill.pid, kill.describe())
            RENDERER_KILLS.inc()
        self._kills.extend(kills)
        return kills

    @contextlib.asynccontextmanager
    async def frame_turn(self, most_s: float) -> AsyncIterator[bool]:
        """This browser's turn to draw a full-page frame, one snapshot at a time. Waits at
        most `most_s` for the snapshot drawing now (a stuck page must not stall the others'
        screenshots); yields False when it waited that long and draws anyway."""
        try:
            await asyncio.wait_for(self._frames.acquire(), most_s)
        except TimeoutError:
            yield False
            return
        try:
            yield True
        finally:
            self._frames.release()

    def claim_renderer_kill(self) -> RendererKill | None:
        """For a page that crashed: the kill that caused it, if the watchdog made one in the
        last `renderer_claim_s` not yet claimed. A killed renderer crashes the pages of one
        context only, so the first page to crash after a kill is that kill's page."""
        now = time.monotonic()
        self._kills = [k for k in self._kills if now - k.at <= self.limits.renderer_claim_s]
        return self._kills.pop(0) if self._kills else None

    async def _renderer_loop(self) -> None:
        scanned = 0.0
        while True:
            lim = self.limits
            hot = self._watch.largest > lim.max_renderer_bytes // 2
            await asyncio.sleep(lim.renderer_hot_check_s if hot else lim.renderer_check_s)
            if not self._active:
                self._watch.largest = 0
                continue
            rescan = time.monotonic() - scanned >= lim.renderer_check_s
            if rescan:
                scanned = time.monotonic()
            try:
                await self.check_renderers(rescan)
            except Exception:  # never let a process surprise end the watchdog
                log.exception("renderer check failed")

    async def _launch(self) -> None:
        if self._pw is None:
            self._pw = await async_playwright().start()
        await asyncio.to_thread(profiles.sweep_stale_profiles)
        try:
            browser = await asyncio.wait_for(
                self._pw.chromium.launch(
                    executable_path=self.limits.executable,
                    args=[
                        *CHROMIUM_ARGS,
                        "--ignore-certificate-errors-spki-list=" + self.interceptor.spki_hash,
                    ],
                    handle_sigint=False,
                    handle_sigterm=False,
                    handle_sighup=False,
                ),
                self.limits.launch_timeout_s,
            )
        except Exception as exc:
            raise BrowserUnavailable(f"cannot launch {self.limits.executable}: {exc}") from exc
        self._browser = browser
        self._pid = await self._browser_pid(browser)
        self._launched_at = time.monotonic()
        self._captures = 0
        self._retire = None
        LAUNCHES.inc()
        log.info("browser %s launched, pid %s", browser.version, self._pid)

    @staticmethod
    async def _browser_pid(browser: Browser) -> int | None:
        cdp = await browser.new_browser_cdp_session()
        try:
            info = await cdp.send("SystemInfo.getProcessInfo")
        finally:
            with contextlib.suppress(Exception):
                await cdp.detach()
        for proc in info.get("processInfo", []):
            if proc.get("type") == "browser":
                return int(proc["id"])
        return None

    async def _stop_browser(self) -> None:
        browser, pid = self._browser, self._pid
        self._browser, self._pid = None, None
        if browser is None:
            return
        try:
            await asyncio.wait_for(browser.close(), self.limits.close_timeout_s)
        except Exception as exc:
            log.warning("browser did not close (%s): killing it", exc)
        if pid is not None:
            await asyncio.to_thread(processes.kill_tree, pid)

    async def _drop(self, reason: str) -> None:
        """The browser died or was killed: forget it (the next acquire relaunches)."""
        await self._stop_browser()
        self._retire = None
        self._count_restart(reason)

    async def _kill(self, reason: str) -> None:
        """Kill a sick browser now; snapshots using it fail."""
        pid = self._pid
        if pid is not None:
            await asyncio.to_thread(processes.kill_tree, pid)
        async with self._cond:
            if self._browser is not None:
                await self._drop(reason)
            self._cond.notify_all()

    async def probe(self) -> bool:
        """Health probe: the browser answers a CDP call in time (True when not running)."""
        browser = self._browser
        if browser is None:
            return True
        if not browser.is_connected():
            return False
        # Not wait_for: it waits for the cancelled call to finish, and a call a hung browser
        # never answers (its CDP session's detach, say) never finishes. The abandoned call
        # ends when the browser is killed and its connection closes.
        call = asyncio.create_task(self._browser_pid(browser), name="browser-probe-call")
        done, _ = await asyncio.wait({call}, timeout=self.limits.probe_timeout_s)
        if not done:
            call.cancel()
            call.add_done_callback(_swallow_result)
            log.warning("browser probe: no answer in %gs", self.limits.probe_timeout_s)
            return False
        if (exc := call.exception()) is not None:
            log.warning("browser probe failed: %s", exc)
            return False
        return True

    async def _probe_loop(self) -> None:
        while True:
            await asyncio.sleep(self.limits.probe_interval_s)
            if self._browser is None:
                continue
            try:
                if not await self.probe():
                    await self._kill(
                        "hang" if self._browser and self._browser.is_connected() else "crash"
                    )
                    continue
                await self.check_memory()
            except Exception:  # one surprise must not end the probe for the worker's life
                log.exception("browser probe round failed")


def _swallow_result(task: asyncio.Task[Any]) -> None:
    """Retrieve an abandoned task's outcome, so asyncio does not log it as never retrieved."""
    if not task.cancelled():
        task.exception()
