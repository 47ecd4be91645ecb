"""The `navigate` operation: load a URL in the snapshot's page and describe what happened
(status, headers, redirect chain, the egress proxy's refusals and errors, the operator's
cookies as facts, never values)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any, Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, Request, Response
from playwright.async_api import TimeoutError as PlaywrightTimeout

from services.archiver.egress import ERROR_HEADER
from services.archiver.pagesession import OpError, PageSession
from shared import pageclient as proto
from shared.cookies import REDACTED
from shared.fetching.sniffing import media_type
from shared.links.urlparts import SCHEME_PREFIXES

LoadState = Literal["commit", "domcontentloaded", "load", "networkidle"]
LOAD_STATES = ("load", "domcontentloaded", "networkidle", "commit")
SESSION_HEADERS = frozenset({"set-cookie", "cookie", "authorization"})
"""Header values a context holding the operator's cookies never records (a site renews the
session it was shown in Set-Cookie: a new secret of the same account)."""

PROXY_ERRORS = {
    "refused": proto.E_REFUSED,
    "no_such_host": proto.E_NO_HOST,
    "dns": proto.E_DNS,
    "connect": proto.E_NAVIGATION,
    "tls": proto.E_NAVIGATION,
    "timeout": proto.E_TIMEOUT,
}
"""The egress proxy's error kinds (`X-Archiver-Error`) as the navigation's error codes."""


class DocumentEndedEarly(Exception):
    """The main document's body broke off after its response (see `goto`)."""


RECORD_MARGIN_MS = (1300.0, 4000.0)
"""The least and the most of a navigation's time kept for what follows a timed-out `goto`:
the renderer probe (up to 1 s) and the navigation record (the page described)."""


def record_margin_ms(left_ms: float) -> float:
    """The time kept after `goto` for the probe and the record: a quarter of the op's time,
    within RECORD_MARGIN_MS. On a loaded machine the probe and the description take longer;
    an op cut short loses the record (navigate.json and its events) altogether."""
    least, most = RECORD_MARGIN_MS
    return min(most, max(least, left_ms / 4))


async def navigate(s: PageSession, req: dict[str, Any]) -> dict[str, Any]:
    """Load `url` until `wait_until`; the navigation record (kept for `state`)."""
    url = req.get("url")
    wait_until: LoadState = req.get("wait_until") or "load"
    if not isinstance(url, str) or not url.startswith(SCHEME_PREFIXES):
        raise OpError(proto.E_BAD_REQUEST, "url must be an http(s) URL")
    if wait_until not in LOAD_STATES:
        raise OpError(proto.E_BAD_REQUEST, f"wait_until must be one of {LOAD_STATES}")
    page = await s.page()
    assert s.proxy is not None
    # told before the browser asks: its events about the request come after the proxy has it
    s.proxy.expect_document(url)
    await s.load_cookies(url)
    started = time.monotonic()
    s.network.doc_response = None
    error: dict[str, str] | None = None
    response: Response | None = None
    # recorded first: if even this op is cut short, later hooks do not navigate again
    cut_short = {"code": proto.E_TIMEOUT, "message": "navigation cut short"}
    s.navigation = {"url": url, "final_url": None, "status": None, "document": False,
                    "error": cut_short}  # fmt: skip
    # leave time within the op's deadline for the renderer probe and the record
    deadline = float(req.get("deadline") or time.monotonic() + float(req.get("timeout") or 30))
    left_ms = (deadline - time.monotonic()) * 1000
    goto_ms = max(300.0, left_ms - record_margin_ms(left_ms))
    try:
        response = await goto(s, page, url, wait_until, goto_ms)
    except DocumentEndedEarly as exc:
        error = {"code": proto.E_TRUNCATED, "message": str(exc)}
    except PlaywrightTimeout as exc:
        error = {"code": proto.E_TIMEOUT, "message": str(exc).splitlines()[0]}
        await s.probe_renderer(page)
    except PlaywrightError as exc:
        message = str(exc).splitlines()[0]
        code = proto.E_DOWNLOAD if "Download is starting" in message else proto.E_NAVIGATION
        doc = s.network.doc_response
        # an HTTP error answered, then a network error: the status is what happened (a
        # 401 whose login challenge nobody answers ends ERR_INVALID_AUTH_CREDENTIALS);
        # a PDF the browser downloads (no viewer, or an attachment) is the document it is
        if not (code == proto.E_NAVIGATION and doc is not None and doc.status >= 400) and not (
            code == proto.E_DOWNLOAD and doc is not None and pdf_document(doc)
        ):
            error = {"code": code, "message": message}
    if s.memory_kill is not None:
        error = {"code": proto.E_RESOURCE_LIMIT, "message": s.memory_kill.describe()}
    response = response or s.network.doc_response
    nav = await describe(s, url, response, error, page)
    nav["elapsed_s"] = round(time.monotonic() - started, 3)
    nav["cookies"] = s.cookie_facts()
    if s.cookies:  # the site's answers to a logged-in context may renew the session
        nav["headers"] = [
            [name, REDACTED if name.lower() in SESSION_HEADERS else value]
            for name, value in nav["headers"]
        ]
        nav = s.cookies.scrub_data(nav)
    s.navigation = nav
    s.loaded_at = time.monotonic()
    return nav


async def goto(
    s: PageSession, page: Page, url: str, wait_until: LoadState, timeout_ms: float
) -> Response | None:
    """`page.goto`, ended early when the main document's body breaks off after its
    response (the egress proxy's byte cap, or the server closing early): Chromium then
    leaves the document `loading` for good, no load event, so goto would wait out its
    whole timeout. The document is stopped instead (`Page.stopLoading` makes what
    arrived the page) and DocumentEndedEarly raised."""
    ended: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    s.network.doc_ended_early = ended
    going = asyncio.ensure_future(page.goto(url, wait_until=wait_until, timeout=timeout_ms))
    try:
        either: set[asyncio.Future[Any]] = {going, ended}
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if going.done() or not ended.done():
            return await going
        with contextlib.suppress(PlaywrightError, TimeoutError):
            cdp = await s.cdp(page)
            await asyncio.wait_for(cdp.send("Page.stopLoading"), 2)
        s.event("document_ended_early", url=url, failure=ended.result())
        raise DocumentEndedEarly(f"the document's body broke off: {ended.result()}")
    finally:
        s.network.doc_ended_early = None
        if not going.done():
            going.cancel()
        with contextlib.suppress(asyncio.CancelledError, PlaywrightError):
            await going


async def describe(
    s: PageSession, url: str, response: Response | None, error: dict[str, str] | None, page: Page
) -> dict[str, Any]:
    """The navigation record: status, headers, redirect chain, refusals, error."""
    assert s.proxy is not None
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
    proxied = proxy_error(s, url, response)
    if proxied is not None:
        error = proxied
    truncated = [t for t in s.proxy.log.truncated if t.get("url") in (final_url, url)]
    document = (
        response is not None
        and proxied is None
        and not s.crashed
        and not (error and error["code"] == proto.E_DOWNLOAD)
        and (pdf_document(response) or not page.url.startswith(("chrome-error:", "about:")))
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
        "refused": s.proxy.log.refused[:50],
    }


def pdf_document(response: Response) -> bool:
    """Whether the navigation's document is a PDF. Full Chromium shows one in its PDF viewer
    (the page's URL is the PDF's); the headless shell, which has no viewer, downloads it, as
    both do with one sent as an attachment, and the page stays blank. It is the page's
    document either way: the fetch plugin keeps the file and readable its text, and the page
    captures skip it (shared.pageclient.run_page_capture)."""
    return media_type(response.headers.get("content-type", "")) == "application/pdf"


def proxy_error(s: PageSession, url: str, response: Response | None) -> dict[str, str] | None:
    """The navigation's error when the egress proxy did not serve its main document: its
    error answer is the response, or (a tunnel it failed) there is none."""
    assert s.proxy is not None
    kind = response.headers.get(ERROR_HEADER) if response is not None else None
    if response is not None and kind is None:
        return None
    last = s.network.doc_urls[-1:] or [url]
    entry = s.proxy.log.failure(last[0]) or s.proxy.log.failure(url)
    if entry is None and kind is None:
        return None
    kind = kind or str(entry and entry.get("kind"))
    reason = str(entry.get("reason")) if entry else kind
    code = PROXY_ERRORS.get(kind, proto.E_NAVIGATION)
    return {"code": code, "message": f"{last[0]}: {reason}"}
