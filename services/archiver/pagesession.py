"""One snapshot's page: its browser context, egress proxy, logs, and what every protocol
operation needs of them (the operations are pageops.py's and pagenavigate.py's).

The context is created on the first operation that needs a page, so snapshots whose hooks
never ask for the browser cost nothing. Everything the page does that an archive must not
do is stopped here and recorded in the event log: popups and new tabs are closed, dialogs
are dismissed (`beforeunload` is accepted so navigation proceeds), downloads are refused
(`accept_downloads=False`), service workers are blocked (so every request goes through the
context's egress proxy, see egress/proxy.py). A page whose renderer the broker's watchdog
killed for memory (renderers.py) ends its navigation, and every later operation, with
`E_PAGE_RESOURCE_LIMIT` and a `renderer_memory_limit` event.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.async_api import BrowserContext, CDPSession, Dialog, Download, Page
from playwright.async_api import Error as PlaywrightError

from services.archiver import lazywatch, settlewatch
from services.archiver.browser import BrowserBroker
from services.archiver.egress import EgressPolicy, EgressProxy
from services.archiver.egress.traffic import TrafficLog
from services.archiver.pagenetwork import PageNetwork
from services.archiver.renderers import RendererKill
from shared import pageclient as proto
from shared.cookies import CookieSet
from shared.cookies import load as load_cookies
from shared.filehash import sha256_file

log = logging.getLogger(__name__)


class OpError(Exception):
    """An error answer of the protocol."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class PageOptions:
    """How a snapshot's context is set up."""

    user_agent: str
    viewport_width: int = 1280
    viewport_height: int = 800
    max_response_bytes: int = 50 * 1024 * 1024
    idle_timeout_s: float = 60.0
    max_log_entries: int = 2000
    policy: EgressPolicy | None = None
    cookies_dir: str | None = None
    """COOKIES_DIR: the link's site's cookies go into its context (shared.cookies)."""
    warc_max_bytes: int = 100 * 1024 * 1024
    """Bytes of bodies the snapshot's browser WARC may hold (0: not recorded)."""


TRAFFIC_PART = ".browser.warc.gz.part"
"""Where the snapshot's browser WARC is written until a hook asks for it (`traffic`)."""


class PageSession:
    """The page of one snapshot. Operations run one at a time (`lock`)."""

    def __init__(self, broker: BrowserBroker, out_dir: Path, options: PageOptions) -> None:
        self.broker = broker
        self.out_dir = out_dir.resolve()
        self.options = options
        self.lock = asyncio.Lock()
        self.navigation: dict[str, Any] | None = None
        self.events: list[dict[str, Any]] = []
        self.unresponsive = False
        self.crashed = False
        self.memory_kill: RendererKill | None = None
        """Set when the watchdog killed this page's renderer for its memory."""
        self.network = PageNetwork(options.max_log_entries)
        self.proxy: EgressProxy | None = None
        self.traffic: TrafficLog | None = None
        self.cookies: CookieSet | None = None
        """The operator's cookies loaded into the context for the link's site (their values
        are scrubbed from every answer: they never reach navigate.json or a log)."""
        self.loaded_at = time.monotonic()
        """When the last navigation ended."""
        self._stack = contextlib.AsyncExitStack()
        self._page: Page | None = None
        self._context: BrowserContext | None = None
        self._cdp_session: CDPSession | None = None

    # -- lifecycle ---------------------------------------------------------------------

    async def page(self) -> Page:
        """The page, creating the context on first use."""
        if self._page is not None:
            if self.crashed or self._page.is_closed():
                raise self.dead_page("the page crashed or was closed")
            return self._page
        o = self.options
        if o.warc_max_bytes > 0:
            self.traffic = TrafficLog(self.out_dir / TRAFFIC_PART, o.warc_max_bytes)
            self._stack.push_async_callback(self.traffic.discard)
        self.proxy = EgressProxy(
            o.policy or EgressPolicy(), o.max_response_bytes, o.idle_timeout_s,
            interceptor=self.broker.interceptor, traffic=self.traffic,
        )  # fmt: skip
        self.proxy.log.max_entries = o.max_log_entries
        self.proxy.is_document = self.network.is_document
        proxy_url = await self.proxy.start()
        self._stack.push_async_callback(self.proxy.close)
        try:
            ctx = await self._stack.enter_async_context(
                self.broker.context(
                    user_agent=o.user_agent,
                    viewport={"width": o.viewport_width, "height": o.viewport_height},
                    accept_downloads=False,
                    service_workers="block",
                    proxy={"server": proxy_url},
                )
            )
        except Exception as exc:
            raise OpError(proto.E_BROWSER, f"no browser context: {exc}") from exc
        self._context = ctx
        await ctx.add_init_script(lazywatch.WATCH_JS + "\n" + settlewatch.WATCH_JS)
        ctx.on("page", self._on_new_page)
        page = await ctx.new_page()
        page.on("dialog", self._on_dialog)
        page.on("download", self._on_download)
        self.network.watch(page)
        page.on("crash", self._on_crash)
        self._page = page
        return page

    @property
    def url(self) -> str | None:
        """The page's URL (None: no page yet)."""
        return self._page.url if self._page is not None else None

    async def close(self) -> None:
        """Close the context and the proxy."""
        self._page = None
        self._cdp_session = None
        await self._stack.aclose()

    # -- what the page does that an archive must not -------------------------------------

    def event(self, kind: str, **fields: Any) -> None:
        """Record an event in the snapshot's event log (at most max_log_entries)."""
        if len(self.events) < self.options.max_log_entries:
            self.events.append({"type": kind, "at": round(time.time(), 3), **fields})

    async def _on_new_page(self, page: Page) -> None:
        if page is self._page or self._page is None:
            return
        self.event("popup_closed", url=page.url)
        with contextlib.suppress(PlaywrightError):
            await page.close()

    async def _on_dialog(self, dialog: Dialog) -> None:
        self.event("dialog_dismissed", dialog=dialog.type, message=dialog.message[:500])
        with contextlib.suppress(PlaywrightError):
            if dialog.type == "beforeunload":
                await dialog.accept()
            else:
                await dialog.dismiss()

    def _on_download(self, download: Download) -> None:
        self.event("download_refused", url=download.url)

    def _on_crash(self, page: Page) -> None:
        """The page's renderer died. Playwright delivers this event before it fails the
        operations waiting on the page, so they see `memory_kill` when the watchdog's kill
        (renderers.py) was the cause."""
        if self.crashed:
            return
        self.crashed = self.unresponsive = True
        self.memory_kill = self.broker.claim_renderer_kill()
        if self.memory_kill is None:
            self.event("page_crashed", url=page.url)
        else:
            kill = self.memory_kill
            self.event("renderer_memory_limit", url=page.url, mib=kill.mib,
                       limit_mib=kill.limit_mib)  # fmt: skip

    # -- what the operations need ------------------------------------------------------

    def dead_page(self, why: str = "the page's renderer is stuck or crashed") -> OpError:
        """The error of an operation on a page whose renderer is stuck, crashed or killed."""
        if self.memory_kill is not None:
            return OpError(proto.E_RESOURCE_LIMIT, self.memory_kill.describe())
        return OpError(proto.E_UNRESPONSIVE, why)

    async def live_page(self) -> Page:
        """The page, for operations that need its renderer (not stuck, document loaded)."""
        if self.unresponsive:
            raise self.dead_page()
        return await self.page()

    async def probe_renderer(self, page: Page) -> None:
        """After a timeout: is the renderer still answering? If not, mark it stuck. An
        operation that runs out of time while it asks has not had an answer either: the
        renderer is marked all the same (the record the operation leaves says so)."""
        try:
            await asyncio.wait_for(page.evaluate("1"), 1.0)
        except BaseException as exc:
            self.unresponsive = True
            self.event("page_unresponsive", url=page.url)
            if not isinstance(exc, Exception):
                raise

    async def evaluate(self, expression: str, arg: Any = None) -> Any:
        """Run a script in the page: E_PAGE_SCRIPT when it throws, the dead-page error when
        the renderer died under it (it did not throw)."""
        page = await self.live_page()
        try:
            return await page.evaluate(expression, arg)
        except PlaywrightError as exc:
            if self.crashed:
                raise self.dead_page() from exc
            raise OpError(proto.E_SCRIPT, str(exc).splitlines()[0]) from exc

    async def cdp(self, page: Page) -> CDPSession:
        """The page's DevTools session (opened once per snapshot)."""
        if self._cdp_session is None:
            if self._context is None:
                raise OpError(proto.E_BROWSER, "no browser context")
            self._cdp_session = await self._context.new_cdp_session(page)
        return self._cdp_session

    def out_path(self, req: dict[str, Any]) -> Path:
        """The request's `path`: an absolute path inside the snapshot folder."""
        raw = req.get("path")
        if not isinstance(raw, str) or not raw.startswith("/"):
            raise OpError(proto.E_BAD_REQUEST, "path must be an absolute path")
        path = Path(raw).resolve()
        if not path.is_relative_to(self.out_dir):
            raise OpError(proto.E_BAD_REQUEST, f"path {raw} is outside the snapshot folder")
        return path

    async def load_cookies(self, url: str) -> None:
        """Once per snapshot, on its first navigation: the site's cookies of COOKIES_DIR,
        for the link's site only (a cookie of another domain in its file is left out, and
        the browser sends these to their own domain alone)."""
        if self.cookies is not None or self._context is None:
            return
        self.cookies = load_cookies(self.options.cookies_dir, url)
        if self.cookies:
            await self._context.add_cookies(self.cookies.for_playwright())  # type: ignore[arg-type]
            self.event("cookies_loaded", **(self.cookie_facts() or {}))
            log.info("snapshot context: %r", self.cookies)

    def cookie_facts(self) -> dict[str, Any] | None:
        """Which site's cookies the context holds and how many (never their values)."""
        if not self.cookies:
            return None
        return {"site": self.cookies.site, "count": len(self.cookies.cookies)}


def file_result(path: Path, **extra: Any) -> dict[str, Any]:
    """The answer of an operation that wrote a file: its path, size and sha256."""
    size, digest = sha256_file(path)
    return {"path": str(path), "bytes": size, "sha256": digest, **extra}
