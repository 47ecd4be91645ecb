"""One snapshot's page: its browser context, egress proxy, logs, and the protocol operations.

The context is created on the first operation that needs a page, so snapshots whose hooks
never ask for the browser cost nothing. Everything the page does that an archive must not
do is stopped here and recorded in the event log: popups and new tabs are closed, dialogs
are dismissed (`beforeunload` is accepted so navigation proceeds), downloads are refused
(`accept_downloads=False`), service workers are blocked (so every request goes through the
context's egress proxy, see egress.py). A page whose renderer the broker's watchdog killed
for memory (renderers.py) ends its navigation, and every later operation, with
`E_PAGE_RESOURCE_LIMIT` and a `renderer_memory_limit` event.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import logging
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from playwright.async_api import (
    BrowserContext,
    CDPSession,
    Dialog,
    Download,
    Page,
    Request,
    Response,
)
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from services.archiver import lazywatch, settlewatch
from services.archiver.browser import BrowserBroker
from services.archiver.egress import ERROR_HEADER, EgressPolicy, EgressProxy, origin
from services.archiver.renderers import RendererKill
from services.archiver.traffic import TrafficLog
from shared import pageclient as proto
from shared.cookies import REDACTED, CookieSet
from shared.cookies import load as load_cookies
from shared.links.urlparts import SCHEME_PREFIXES

log = logging.getLogger(__name__)

LOAD_STATES = ("load", "domcontentloaded", "networkidle", "commit")
SESSION_HEADERS = frozenset({"set-cookie", "cookie", "authorization"})
"""Header values a context holding the operator's cookies never records (a site renews the
session it was shown in Set-Cookie: a new secret of the same account)."""


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


def _number(req: dict[str, Any], name: str, default: float) -> float:
    """A non-negative number argument of an operation."""
    try:
        value = float(req.get(name, default))
    except (TypeError, ValueError) as exc:
        raise OpError(proto.E_BAD_REQUEST, f"{name} must be a number") from exc
    if not value >= 0:
        raise OpError(proto.E_BAD_REQUEST, f"{name} must be >= 0")
    return value


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


BROKEN_OFF = frozenset(
    "net::ERR_" + name
    for name in (
        "CONTENT_LENGTH_MISMATCH", "INCOMPLETE_CHUNKED_ENCODING", "CONNECTION_RESET",
        "CONNECTION_CLOSED", "CONNECTION_ABORTED", "CONTENT_DECODING_FAILED", "TIMED_OUT",
        "HTTP2_PROTOCOL_ERROR", "HTTP2_STREAM_ERROR", "SSL_PROTOCOL_ERROR",
    )
)  # fmt: skip
"""How a main document's body breaks off after its response. Other failures then are not
that: a download or a navigation replacing the document (`ERR_ABORTED`), an auth challenge
left unanswered (`ERR_INVALID_AUTH_CREDENTIALS`, the 401 page is then shown)..."""


PROXY_ERRORS = {
    "refused": proto.E_REFUSED,
    "no_such_host": proto.E_REFUSED,
    "dns": proto.E_DNS,
    "connect": proto.E_NAVIGATION,
    "tls": proto.E_NAVIGATION,
    "timeout": proto.E_TIMEOUT,
}
"""The egress proxy's error kinds (`X-Archiver-Error`) as the navigation's error codes."""


TRAFFIC_PART = ".browser.warc.gz.part"
"""Where the snapshot's browser WARC is written until a hook asks for it (`traffic`)."""


class DocumentEndedEarly(Exception):
    """The main document's body broke off after its response (see `PageSession._goto`)."""


class PageSession:
    """The page of one snapshot. Operations run one at a time (`lock`)."""

    def __init__(self, broker: BrowserBroker, out_dir: Path, options: PageOptions) -> None:
        self.broker = broker
        self.out_dir = out_dir.resolve()
        self.options = options
        self.lock = asyncio.Lock()
        self.navigation: dict[str, Any] | None = None
        self.responses: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.unresponsive = False
        self.crashed = False
        self.memory_kill: RendererKill | None = None
        """Set when the watchdog killed this page's renderer for its memory."""
        self._stack = contextlib.AsyncExitStack()
        self._page: Page | None = None
        self._context: BrowserContext | None = None
        self._proxy: EgressProxy | None = None
        self._traffic: TrafficLog | None = None
        self._doc_response: Response | None = None
        self._doc_ended_early: asyncio.Future[str] | None = None
        """Set, during a navigation, with the failure of a main document whose body broke
        off after its response (see _goto)."""
        self._cdp_session: CDPSession | None = None
        self.cookies: CookieSet | None = None
        """The operator's cookies loaded into the context for the link's site (their values
        are scrubbed from every answer: they never reach navigate.json or a log)."""
        self._in_flight: dict[Request, float] = {}
        """Requests the page has open (settlewatch.py), by when each started."""
        self._doc_urls: list[str] = []
        """Every request of the main frame's navigations (redirect hops too), in order."""
        self._doc_origins: set[str] = set()
        self.subresources = 0
        """Requests of the page other than its main document."""
        self.failed_subresources = 0
        """Of those, how many failed (the egress proxy's error answers included; requests
        the page cancelled itself, `ERR_ABORTED`, are not failures)."""
        self._network_at = time.monotonic()
        """When a request of the page last started or ended."""
        self._loaded_at = time.monotonic()
        """When the last navigation ended."""

    # -- lifecycle ---------------------------------------------------------------------

    async def page(self) -> Page:
        """The page, creating the context on first use."""
        if self._page is not None:
            if self.crashed or self._page.is_closed():
                raise self.dead_page("the page crashed or was closed")
            return self._page
        o = self.options
        if o.warc_max_bytes > 0:
            self._traffic = TrafficLog(self.out_dir / TRAFFIC_PART, o.warc_max_bytes)
            self._stack.push_async_callback(self._traffic.discard)
        self._proxy = EgressProxy(
            o.policy or EgressPolicy(), o.max_response_bytes, o.idle_timeout_s,
            interceptor=self.broker.interceptor, traffic=self._traffic,
        )  # fmt: skip
        self._proxy.log.max_entries = o.max_log_entries
        self._proxy.is_document = self._is_document
        proxy_url = await self._proxy.start()
        self._stack.push_async_callback(self._proxy.close)
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
        page.on("request", self._on_request)
        page.on("response", self._on_response)
        page.on("requestfinished", self._on_request_finished)
        page.on("requestfailed", self._on_request_failed)
        page.on("crash", self._on_crash)
        self._page = page
        return page

    async def close(self) -> None:
        """Close the context and the proxy."""
        self._page = None
        self._cdp_session = None
        await self._stack.aclose()

    # -- event handlers ----------------------------------------------------------------

    def _event(self, kind: str, **fields: Any) -> None:
        if len(self.events) < self.options.max_log_entries:
            self.events.append({"type": kind, "at": round(time.time(), 3), **fields})

    async def _on_new_page(self, page: Page) -> None:
        if page is self._page or self._page is None:
            return
        self._event("popup_closed", url=page.url)
        with contextlib.suppress(PlaywrightError):
            await page.close()

    async def _on_dialog(self, dialog: Dialog) -> None:
        self._event("dialog_dismissed", dialog=dialog.type, message=dialog.message[:500])
        with contextlib.suppress(PlaywrightError):
            if dialog.type == "beforeunload":
                await dialog.accept()
            else:
                await dialog.dismiss()

    def _on_download(self, download: Download) -> None:
        self._event("download_refused", url=download.url)

    def _on_crash(self, page: Page) -> None:
        """The page's renderer died. Playwright delivers this event before it fails the
        operations waiting on the page, so they see `memory_kill` when the watchdog's kill
        (renderers.py) was the cause."""
        if self.crashed:
            return
        self.crashed = self.unresponsive = True
        self.memory_kill = self.broker.claim_renderer_kill()
        if self.memory_kill is None:
            self._event("page_crashed", url=page.url)
        else:
            kill = self.memory_kill
            self._event("renderer_memory_limit", url=page.url, mib=kill.mib,
                        limit_mib=kill.limit_mib)  # fmt: skip

    def dead_page(self, why: str = "the page's renderer is stuck or crashed") -> OpError:
        """The error of an operation on a page whose renderer is stuck, crashed or killed."""
        if self.memory_kill is not None:
            return OpError(proto.E_RESOURCE_LIMIT, self.memory_kill.describe())
        return OpError(proto.E_UNRESPONSIVE, why)

    def _is_document(self, url: str, tunnel: bool) -> bool:
        """EgressProxy.is_document: is this proxied request the page's main document?"""
        return origin(url) in self._doc_origins if tunnel else url in self._doc_urls

    def _is_main_document(self, request: Request) -> bool:
        return request.is_navigation_request() and request.frame == request.frame.page.main_frame

    def _on_response(self, response: Response) -> None:
        request = response.request
        if self._is_main_document(request):
            self._doc_response = response
        elif response.headers.get(ERROR_HEADER):
            self.failed_subresources += 1
        if len(self.responses) < self.options.max_log_entries:
            self.responses.append(
                {
                    "url": response.url,
                    "status": response.status,
                    "method": request.method,
                    "resource_type": request.resource_type,
                    "content_type": response.headers.get("content-type", ""),
                }
            )

    def _on_request(self, request: Request) -> None:
        self._network_at = time.monotonic()
        if self._is_main_document(request):
            self._doc_urls.append(request.url)
            self._doc_origins.add(origin(request.url))
        else:
            self.subresources += 1
        if request.resource_type not in settlewatch.STREAM_TYPES:
            self._in_flight[request] = self._network_at

    def _on_request_finished(self, request: Request) -> None:
        self._network_at = time.monotonic()
        self._in_flight.pop(request, None)

    def _on_request_failed(self, request: Request) -> None:
        self._on_request_finished(request)
        ended = self._doc_ended_early
        doc = self._doc_response
        failure = request.failure or "failed"
        if failure != "net::ERR_ABORTED" and not self._is_main_document(request):
            self.failed_subresources += 1
        if (
            ended is not None
            and not ended.done()
            and doc is not None
            and doc.request == request
            and failure in BROKEN_OFF
        ):
            ended.set_result(failure)
        if len(self.responses) < self.options.max_log_entries:
            self.responses.append(
                {
                    "url": request.url,
                    "method": request.method,
                    "resource_type": request.resource_type,
                    "failure": request.failure or "failed",
                }
            )

    # -- helpers -----------------------------------------------------------------------

    def _path(self, req: dict[str, Any]) -> Path:
        raw = req.get("path")
        if not isinstance(raw, str) or not raw.startswith("/"):
            raise OpError(proto.E_BAD_REQUEST, "path must be an absolute path")
        path = Path(raw).resolve()
        if not path.is_relative_to(self.out_dir):
            raise OpError(proto.E_BAD_REQUEST, f"path {raw} is outside the snapshot folder")
        return path

    async def _live_page(self) -> Page:
        """The page, for operations that need its renderer (not stuck, document loaded)."""
        if self.unresponsive:
            raise self.dead_page()
        return await self.page()

    async def _probe_renderer(self, page: Page) -> None:
        """After a timeout: is the renderer still answering? If not, mark it stuck."""
        try:
            await asyncio.wait_for(page.evaluate("1"), 1.0)
        except Exception:
            self.unresponsive = True
            self._event("page_unresponsive", url=page.url)

    @staticmethod
    def _ms(req: dict[str, Any]) -> float:
        return max(100.0, float(req.get("timeout") or 30) * 1000 - 200)

    def _file_result(self, path: Path, **extra: Any) -> dict[str, Any]:
        return {
            "path": str(path),
            "bytes": path.stat().st_size,
            "sha256": _sha256_file(path),
            **extra,
        }

    # -- operations --------------------------------------------------------------------

    async def op_state(self, req: dict[str, Any]) -> dict[str, Any]:
        return {
            "navigated": self.navigation is not None,
            "navigation": self.navigation,
            "url": self._page.url if self._page is not None else None,
            "unresponsive": self.unresponsive,
        }

    async def op_navigate(self, req: dict[str, Any]) -> dict[str, Any]:
        url = req.get("url")
        wait_until: Literal["commit", "domcontentloaded", "load", "networkidle"] = (
            req.get("wait_until") or "load"
        )
        if not isinstance(url, str) or not url.startswith(SCHEME_PREFIXES):
            raise OpError(proto.E_BAD_REQUEST, "url must be an http(s) URL")
        if wait_until not in LOAD_STATES:
            raise OpError(proto.E_BAD_REQUEST, f"wait_until must be one of {LOAD_STATES}")
        page = await self.page()
        await self._load_cookies(url)
        started = time.monotonic()
        self._doc_response = None
        error: dict[str, str] | None = None
        response: Response | None = None
        # recorded first: if even this op is cut short, later hooks do not navigate again
        cut_short = {"code": proto.E_TIMEOUT, "message": "navigation cut short"}
        self.navigation = {"url": url, "final_url": None, "status": None, "document": False,
                           "error": cut_short}  # fmt: skip
        # leave time within the op's deadline for the renderer probe and the record
        deadline = float(req.get("deadline") or time.monotonic() + float(req.get("timeout") or 30))
        goto_ms = max(300.0, (deadline - time.monotonic()) * 1000 - 1300)
        try:
            response = await self._goto(page, url, wait_until, goto_ms)
        except DocumentEndedEarly as exc:
            error = {"code": proto.E_TRUNCATED, "message": str(exc)}
        except PlaywrightTimeout as exc:
            error = {"code": proto.E_TIMEOUT, "message": str(exc).splitlines()[0]}
            await self._probe_renderer(page)
        except PlaywrightError as exc:
            message = str(exc).splitlines()[0]
            code = proto.E_DOWNLOAD if "Download is starting" in message else proto.E_NAVIGATION
            doc = self._doc_response
            # an HTTP error answered, then a network error: the status is what happened (a
            # 401 whose login challenge nobody answers ends ERR_INVALID_AUTH_CREDENTIALS)
            if not (code == proto.E_NAVIGATION and doc is not None and doc.status >= 400):
                error = {"code": code, "message": message}
        if self.memory_kill is not None:
            error = {"code": proto.E_RESOURCE_LIMIT, "message": self.memory_kill.describe()}
        response = response or self._doc_response
        nav = await self._describe(url, response, error, page)
        nav["elapsed_s"] = round(time.monotonic() - started, 3)
        nav["cookies"] = self._cookie_facts()
        if self.cookies:  # the site's answers to a logged-in context may renew the session
            nav["headers"] = [
                [name, REDACTED if name.lower() in SESSION_HEADERS else value]
                for name, value in nav["headers"]
            ]
            nav = self.cookies.scrub_data(nav)
        self.navigation = nav
        self._loaded_at = time.monotonic()
        return nav

    async def _load_cookies(self, url: str) -> None:
        """Once per snapshot, on its first navigation: the site's cookies of COOKIES_DIR,
        for the link's site only (a cookie of another domain in its file is left out, and
        the browser sends these to their own domain alone)."""
        if self.cookies is not None or self._context is None:
            return
        self.cookies = load_cookies(self.options.cookies_dir, url)
        if self.cookies:
            await self._context.add_cookies(self.cookies.for_playwright())  # type: ignore[arg-type]
            self._event("cookies_loaded", **(self._cookie_facts() or {}))
            log.info("snapshot context: %r", self.cookies)

    def _cookie_facts(self) -> dict[str, Any] | None:
        """Which site's cookies the context holds and how many (never their values)."""
        if not self.cookies:
            return None
        return {"site": self.cookies.site, "count": len(self.cookies.cookies)}

    async def _goto(
        self,
        page: Page,
        url: str,
        wait_until: Literal["commit", "domcontentloaded", "load", "networkidle"],
        timeout_ms: float,
    ) -> Response | None:
        """`page.goto`, ended early when the main document's body breaks off after its
        response (the egress proxy's byte cap, or the server closing early): Chromium then
        leaves the document `loading` for good, no load event, so goto would wait out its
        whole timeout. The document is stopped instead (`Page.stopLoading` makes what
        arrived the page) and DocumentEndedEarly raised."""
        ended: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._doc_ended_early = ended
        goto = asyncio.ensure_future(page.goto(url, wait_until=wait_until, timeout=timeout_ms))
        try:
            either: set[asyncio.Future[Any]] = {goto, ended}
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            if goto.done() or not ended.done():
                return await goto
            with contextlib.suppress(PlaywrightError, TimeoutError):
                cdp = await self._cdp(page)
                await asyncio.wait_for(cdp.send("Page.stopLoading"), 2)
            self._event("document_ended_early", url=url, failure=ended.result())
            raise DocumentEndedEarly(f"the document's body broke off: {ended.result()}")
        finally:
            self._doc_ended_early = None
            if not goto.done():
                goto.cancel()
            with contextlib.suppress(asyncio.CancelledError, PlaywrightError):
                await goto

    async def op_settle(self, req: dict[str, Any]) -> dict[str, Any]:
        """Wait until the loaded page is quiet for `quiet_ms`: no request in flight (one
        open longer than `settlewatch.LONG_REQUEST_S` counts as a stream), no timer due
        within `horizon_ms` pending, its number of elements unchanged; at most `max_ms`
        (see settlewatch.py). Never an error for a page that does not settle: the answer
        says `settled: false` and what was still pending."""
        page = await self._live_page()
        quiet = _number(req, "quiet_ms", 300) / 1000
        horizon = _number(req, "horizon_ms", 3000)
        deadline = min(
            time.monotonic() + _number(req, "max_ms", 5000) / 1000,
            float(req.get("deadline") or math.inf) - 0.2,
        )
        began, changed = time.monotonic(), self._loaded_at
        elements: int | None = None
        while True:
            try:
                seen = await asyncio.wait_for(
                    page.evaluate(settlewatch.READ_JS, horizon),
                    max(0.05, deadline - time.monotonic()),
                )
            except PlaywrightError as exc:
                if self.crashed:
                    raise self.dead_page() from exc
                if time.monotonic() >= deadline or "destroyed" not in str(exc):
                    return self._settled(False, began, reason=str(exc).splitlines()[0][:200])
                # the page navigated on (a script's redirect): its new document is awaited
                changed, elements = time.monotonic(), None
                await asyncio.sleep(0.1)
                continue
            except TimeoutError:
                return self._settled(False, began, reason="the page did not answer in time")
            now = time.monotonic()
            if seen["elements"] != elements:
                changed = now if elements is not None else changed
                elements = seen["elements"]
            requests = sum(
                1 for t in self._in_flight.values() if now - t < settlewatch.LONG_REQUEST_S
            )
            idle = now - max(changed, self._network_at)
            if not requests and not seen["timers"] and idle >= quiet:
                return self._settled(True, began)
            if now >= deadline:
                pending = {"requests": requests, "timers": seen["timers"]}
                return self._settled(False, began, pending=pending)
            # quiet so far: look again when the quiet time is up (a request in between is
            # seen by its events); something pending: every 100 ms
            wait = quiet - idle if not requests and not seen["timers"] else 0.1
            await asyncio.sleep(max(0.02, min(wait, deadline - now)))

    @staticmethod
    def _settled(settled: bool, began: float, **detail: Any) -> dict[str, Any]:
        waited = round((time.monotonic() - began) * 1000)
        return {"settled": settled, "waited_ms": waited, **detail}

    async def _describe(
        self, url: str, response: Response | None, error: dict[str, str] | None, page: Page
    ) -> dict[str, Any]:
        """The navigation record: status, headers, redirect chain, refusals, error."""
        assert self._proxy is not None
        chain: list[dict[str, Any]] = []
        headers: list[list[str]] = []
        if response is not None:
            req: Request | None = response.request.redirected_from
            while req is not None:
                hop = await req.response()
                chain.append(
                    {
                        "url": req.url,
                        "status": hop.status if hop else None,
                        "location": hop.headers.get("location") if hop else None,
                    }
                )
                req = req.redirected_from
            chain.reverse()
            with contextlib.suppress(PlaywrightError):
                headers = [[h["name"], h["value"]] for h in await response.headers_array()]
        final_url = response.url if response is not None else page.url
        proxied = self._proxy_error(url, response)
        if proxied is not None:
            error = proxied
        truncated = [t for t in self._proxy.log.truncated if t.get("url") in (final_url, url)]
        truncated = [t for t in self._proxy.log.truncated if t.get("url") in (final_url, url)]
        document = (
            response is not None
            and proxied is None
            and not self.crashed
            and not (error and error["code"] == proto.E_DOWNLOAD)
            and not page.url.startswith(("chrome-error:", "about:"))
        )
        return {
            "url": url,
            "final_url": final_url,
            "status": response.status if response is not None and proxied is None else None,
            "status_text": response.status_text if response is not None else None,
            "headers": headers,
            "redirects": chain,
            "document": document,
            "truncated": bool(truncated),
            "error": error,
            "refused": self._proxy.log.refused[:50],
        }

    def _proxy_error(self, url: str, response: Response | None) -> dict[str, str] | None:
        """The navigation's error when the egress proxy did not serve its main document: its
        error answer is the response, or (a tunnel it failed) there is none."""
        assert self._proxy is not None
        kind = response.headers.get(ERROR_HEADER) if response is not None else None
        if response is not None and kind is None:
            return None
        last = self._doc_urls[-1:] or [url]
        entry = self._proxy.log.failure(last[0]) or self._proxy.log.failure(url)
        if entry is None and kind is None:
            return None
        kind = kind or str(entry and entry.get("kind"))
        reason = str(entry.get("reason")) if entry else kind
        code = PROXY_ERRORS.get(kind, proto.E_NAVIGATION)
        return {"code": code, "message": f"{last[0]}: {reason}"}

    async def op_wait(self, req: dict[str, Any]) -> dict[str, Any]:
        page = await self._live_page()
        until = req.get("until")
        if until:
            if until not in LOAD_STATES:
                raise OpError(proto.E_BAD_REQUEST, f"until must be one of {LOAD_STATES}")
            try:
                await page.wait_for_load_state(until, timeout=self._ms(req))
            except PlaywrightTimeout as exc:
                raise OpError(proto.E_TIMEOUT, str(exc).splitlines()[0]) from exc
        ms = float(req.get("ms") or 0)
        if ms > 0:
            await asyncio.sleep(min(ms / 1000, float(req.get("timeout") or 30)))
        return {"url": page.url}

    async def _evaluate(self, expression: str, arg: Any = None) -> Any:
        """Run a script in the page: E_PAGE_SCRIPT when it throws, the dead-page error when
        the renderer died under it (it did not throw)."""
        page = await self._live_page()
        try:
            return await page.evaluate(expression, arg)
        except PlaywrightError as exc:
            if self.crashed:
                raise self.dead_page() from exc
            raise OpError(proto.E_SCRIPT, str(exc).splitlines()[0]) from exc

    async def op_evaluate(self, req: dict[str, Any]) -> dict[str, Any]:
        expression = req.get("expression")
        if not isinstance(expression, str):
            raise OpError(proto.E_BAD_REQUEST, "expression must be a string")
        return {"value": await self._evaluate(expression, req.get("arg"))}

    async def op_lazy(self, req: dict[str, Any]) -> dict[str, Any]:
        """How the page loads content lazily (see lazywatch.py): elements it handed to an
        IntersectionObserver, its scroll listeners, and its elements marked lazy."""
        return dict(await self._evaluate(lazywatch.READ_JS))

    async def op_content(self, req: dict[str, Any]) -> dict[str, Any]:
        path = self._path(req)
        page = await self._live_page()
        html = await page.content()
        if self.cookies:  # a page may print a session token it was given
            html = self.cookies.scrub(html)
        await asyncio.to_thread(path.write_text, html, "utf-8")
        return await asyncio.to_thread(self._file_result, path, url=page.url)

    async def op_screenshot(self, req: dict[str, Any]) -> dict[str, Any]:
        """A PNG of the page (full height up to `max_height`, else the viewport), taken with
        CDP's `Page.captureScreenshot` and `optimizeForSpeed` (fast zlib, about 1/3 of the
        CPU of Playwright's `page.screenshot` for ~25 % larger files; see
        docs/benchmarks.md). `captureBeyondViewport` renders the whole clip at once, so the
        viewport is never resized."""
        path = self._path(req)
        page = await self._live_page()
        full_page = bool(req.get("full_page", True))
        max_height = int(req.get("max_height") or 0)
        cdp = await self._cdp(page)
        metrics = await cdp.send("Page.getLayoutMetrics")
        viewport, content = metrics["cssLayoutViewport"], metrics["cssContentSize"]
        width = int(viewport["clientWidth"])
        page_height = math.ceil(content["height"])
        height = page_height if full_page else int(viewport["clientHeight"])
        clipped = full_page and max_height > 0 and page_height > max_height
        if clipped:
            height = max_height
        shot = await cdp.send(
            "Page.captureScreenshot",
            {
                "format": "png",
                "optimizeForSpeed": True,
                "captureBeyondViewport": full_page,
                "clip": {"x": 0, "y": 0, "width": width, "height": max(1, height), "scale": 1},
            },
        )
        data = base64.b64decode(shot["data"])
        await asyncio.to_thread(path.write_bytes, data)
        return await asyncio.to_thread(
            self._file_result,
            path,
            width=width,
            height=height,
            page_height=page_height,
            clipped=clipped,
        )

    async def _cdp(self, page: Page) -> CDPSession:
        """The page's DevTools session (opened once per snapshot)."""
        if self._cdp_session is None:
            if self._context is None:
                raise OpError(proto.E_BROWSER, "no browser context")
            self._cdp_session = await self._context.new_cdp_session(page)
        return self._cdp_session

    async def op_pdf(self, req: dict[str, Any]) -> dict[str, Any]:
        path = self._path(req)
        page = await self._live_page()
        await page.pdf(path=path, print_background=True)
        return await asyncio.to_thread(self._file_result, path)

    async def op_traffic(self, req: dict[str, Any]) -> dict[str, Any]:
        """Finish the browser WARC (traffic.py) and move it to `path`: every exchange the
        page had so far; none is recorded after. {"path": null} when nothing was recorded."""
        path = self._path(req)
        traffic, proxy = self._traffic, self._proxy
        if traffic is None or proxy is None:
            return {"path": None, "exchanges": 0, "truncated": 0}
        await proxy.relay.flush()
        done = await traffic.finish(path)
        if done is None:
            return {"path": None, "exchanges": 0, "truncated": 0}
        return await asyncio.to_thread(
            self._file_result, path, exchanges=done.exchanges, truncated=done.truncated
        )

    async def op_responses(self, req: dict[str, Any]) -> dict[str, Any]:
        proxy_log = self._proxy.log if self._proxy is not None else None
        answer = {
            "responses": self.responses,
            "refused": proxy_log.refused if proxy_log else [],
            "failed": proxy_log.failed if proxy_log else [],
            "truncated": proxy_log.truncated if proxy_log else [],
            "subresources": self.subresources,
            "failed_subresources": self.failed_subresources,
            "events": self.events,
        }
        return self.cookies.scrub_data(answer) if self.cookies else answer
