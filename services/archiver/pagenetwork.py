"""What a snapshot's page did on the network, from the browser's request events: its main
document's requests and response, the requests in flight (settlewatch.py), the responses log,
its subresources and how many failed, and a main document whose body broke off."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from playwright.async_api import Page, Request, Response

from services.archiver import settlewatch
from services.archiver.egress import ERROR_HEADER
from shared.targets import origin_key

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


def is_main_document(request: Request) -> bool:
    """Is the request a navigation of the page's main frame?"""
    return request.is_navigation_request() and request.frame == request.frame.page.main_frame


class PageNetwork:
    """The requests of one snapshot's page, as its browser events report them."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self.responses: list[dict[str, Any]] = []
        """Every response and failed request, in order (at most max_entries)."""
        self.doc_response: Response | None = None
        """The main document's response of the current navigation."""
        self.doc_ended_early: asyncio.Future[str] | None = None
        """Set, during a navigation, with the failure of a main document whose body broke
        off after its response (see pagenavigate.goto)."""
        self.in_flight: dict[Request, float] = {}
        """Requests the page has open (settlewatch.py), by when each started."""
        self.doc_urls: list[str] = []
        """Every request of the main frame's navigations (redirect hops too), in order."""
        self._doc_origins: set[str] = set()
        self.subresources = 0
        """Requests of the page other than its main document."""
        self.failed_subresources = 0
        """Of those, how many failed (the egress proxy's error answers included; requests
        the page cancelled itself, `ERR_ABORTED`, are not failures)."""
        self.active_at = time.monotonic()
        """When a request of the page last started or ended."""

    def watch(self, page: Page) -> None:
        """Follow the page's request events."""
        page.on("request", self._on_request)
        page.on("response", self._on_response)
        page.on("requestfinished", self._on_request_finished)
        page.on("requestfailed", self._on_request_failed)

    def is_document(self, url: str, tunnel: bool) -> bool:
        """EgressProxy.is_document: is this proxied request the page's main document?"""
        return origin_key(url) in self._doc_origins if tunnel else url in self.doc_urls

    def _on_response(self, response: Response) -> None:
        request = response.request
        if is_main_document(request):
            self.doc_response = response
        elif response.headers.get(ERROR_HEADER):
            self.failed_subresources += 1
        if len(self.responses) < self.max_entries:
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
        self.active_at = time.monotonic()
        if is_main_document(request):
            self.doc_urls.append(request.url)
            self._doc_origins.add(origin_key(request.url))
        else:
            self.subresources += 1
        if request.resource_type not in settlewatch.STREAM_TYPES:
            self.in_flight[request] = self.active_at

    def _on_request_finished(self, request: Request) -> None:
        self.active_at = time.monotonic()
        self.in_flight.pop(request, None)

    def _on_request_failed(self, request: Request) -> None:
        self._on_request_finished(request)
        ended = self.doc_ended_early
        doc = self.doc_response
        failure = request.failure or "failed"
        if failure != "net::ERR_ABORTED" and not is_main_document(request):
            self.failed_subresources += 1
        if (
            ended is not None
            and not ended.done()
            and doc is not None
            and doc.request == request
            and failure in BROKEN_OFF
        ):
            ended.set_result(failure)
        if len(self.responses) < self.max_entries:
            self.responses.append(
                {
                    "url": request.url,
                    "method": request.method,
                    "resource_type": request.resource_type,
                    "failure": failure,
                }
            )
