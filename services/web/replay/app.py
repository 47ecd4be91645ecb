"""What the replay origin serves, and nothing else.

- ``/view/{wacz_id}``: a page holding ReplayWeb.page's ``<replay-web-page>`` over that WACZ,
  opened at the page the capture holds (the UI's "View as it was", ``/links/{id}/replay``,
  leads there: a top-level page, because browsers refuse a service worker to a frame of
  another site than the page's);
- ``/replay/ui.js``, ``/replay/sw.js``: the viewer and its service worker (scope
  ``/replay/``; the replayed pages are answered by it, under ``/replay/w/...``), and the
  viewer's inner page (``/replay/``) for the moments before the worker answers;
- ``/wacz/{wacz_id}.wacz``: the WACZ's bytes, with Range requests (the viewer reads only the
  parts it needs), proxied from S3 (a presigned URL would be another origin the service
  worker must reach);
- ``/about/replay/LICENSE``, ``/about/replay/source.tgz``: the viewer's licence and source,
  as the UI serves them.

Only a WACZ ``queries.replayable`` allows (a public link's, never a private capture's) is
served; every other path is a 404. No cookie is set here and the UI's routes are not
served here (``hosts.py``): a replayed page's scripts, which run in this origin, find no
cookie of ours and no admin route, and the CSP lets them connect to this origin only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    PlainTextResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from services.web import byte_ranges
from services.web.params import MAX_ID
from services.web.queries.replayable import replayable_wacz
from services.web.replay.site import BASE, ReplaySite, licence_file, source_file
from services.web.security import SecurityHeaders
from services.web.state import WebState
from services.web.templating import TEMPLATES
from shared.errors import StorageError

S3_TIMEOUT = 5.0
REPLAY_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' blob:; "
    "connect-src 'self' data: blob:; worker-src 'self'; frame-src 'self'; manifest-src 'none'; "
    "base-uri 'none'; form-action 'none'; object-src 'none'; frame-ancestors 'self'"
)
"""The replay origin's own pages: its own scripts only, connections to itself only, framed
only by itself (the viewer frames the replayed page). The replayed pages get the policy the
service worker gives them (wabac.js: every source ``'self'``, inline and eval allowed, so the
archived page's scripts run but reach nothing beyond this origin)."""
WORKER_CSP = (
    "default-src 'self' data: blob:; script-src 'self' 'unsafe-eval' 'wasm-unsafe-eval' blob:; "
    "connect-src 'self' data: blob:"
)
"""The service worker's own policy: it reads the WACZ from this origin and nothing else."""
REPLAY_HEADERS = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "SAMEORIGIN",
    "cross-origin-opener-policy": "same-origin",
    "referrer-policy": "no-referrer",
    "cross-origin-resource-policy": "same-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=(), interest-cohort=()",
}
VIEWER_INDEX = (
    '<!doctype html>\n<html><head><meta charset="utf-8"><script src="./ui.js"></script>'
    "</head>\n<body><replay-app-main></replay-app-main></body></html>\n"
)
"""The viewer's inner page, as its service worker serves it (``serveIndex``): served here too
for the first visit, when the viewer frames it before the just-registered worker controls the
frame (the viewer reloads the frame only twice, 100 ms apart: on a loaded machine the worker
was not ready by then, and the frame kept a 404)."""
NOT_HERE = "This address only replays the link archive's captures; it has no other page.\n"
JS_CACHE = "public, max-age=3600"

Endpoint = Callable[[Request], Coroutine[Any, Any, Response]]


def _wacz_id(request: Request) -> int | None:
    wacz_id: int = request.path_params["wacz_id"]
    return wacz_id if 1 <= wacz_id <= MAX_ID else None


async def _replayable(state: WebState, request: Request) -> dict[str, Any] | None:
    wacz_id = _wacz_id(request)
    if wacz_id is None:
        return None
    return await state.db.read(lambda c: replayable_wacz(c, wacz_id), None)


def _view(state: WebState, site: ReplaySite) -> Endpoint:
    async def view(request: Request) -> Response:
        found = await _replayable(state, request)
        if found is None:
            return PlainTextResponse("No capture to replay here.\n", 404)
        return TEMPLATES.TemplateResponse(
            request,
            "replay_view.html",
            {
                "source": f"/wacz/{found['id']}.wacz",
                "page_url": found["page_url"],
                "captured_at": found["captured_at"],
                "base": BASE,
                "pin": site.pin,
            },
        )

    return view


def _wacz(state: WebState) -> Endpoint:
    async def wacz(request: Request) -> Response:
        found = await _replayable(state, request)
        if found is None:
            return PlainTextResponse("No capture to replay here.\n", 404)
        size = int(found["bytes"] or 0)
        headers = {
            "accept-ranges": "bytes",
            "cache-control": "public, max-age=300",
            "content-disposition": f'attachment; filename="capture-{found["id"]}.wacz"',
        }
        try:
            part = byte_ranges.parse(request.headers.get("range"), size)
        except byte_ranges.Unsatisfiable:
            return Response(status_code=416, headers=headers | {"content-range": f"bytes */{size}"})
        length = size if part is None else part.length
        if part is not None:
            headers["content-range"] = part.content_range
        status = 200 if part is None else 206
        if request.method == "HEAD":
            headers["content-length"] = str(length)
            return Response(status_code=status, headers=headers, media_type="application/zip")
        if state.store is None:
            return PlainTextResponse("Storage unavailable.\n", 503)
        span = None if part is None else (part.first, part.last)
        try:
            chunks, _ = await asyncio.wait_for(state.store.open(found["s3_key"], span), S3_TIMEOUT)
        except (StorageError, TimeoutError):
            return PlainTextResponse("Storage did not give the file.\n", 502)
        headers["content-length"] = str(length)
        return StreamingResponse(chunks, status, headers, media_type="application/zip")

    return wacz


def _asset(site: ReplaySite, name: str, csp: str | None = None) -> Endpoint:
    path = site.files / name
    headers = {"cache-control": JS_CACHE} | ({"content-security-policy": csp} if csp else {})

    async def asset(_: Request) -> Response:
        return FileResponse(path, media_type="text/javascript", headers=headers)

    return asset


def _file(site: ReplaySite, answer: Callable[[ReplaySite], FileResponse]) -> Endpoint:
    async def file(_: Request) -> Response:
        return answer(site)

    return file


async def _index(_: Request) -> Response:
    return HTMLResponse(VIEWER_INDEX, headers={"cache-control": "no-store"})


async def _home(_: Request) -> Response:
    return PlainTextResponse(NOT_HERE)


def create_replay_app(state: WebState, site: ReplaySite) -> SecurityHeaders:
    """The replay origin's app over the web's state (its database and S3)."""
    routes = [
        Route("/", _home),
        Route("/view/{wacz_id:int}", _view(state, site)),
        Route("/wacz/{wacz_id:int}.wacz", _wacz(state), methods=["GET", "HEAD"]),
        Route(BASE, _index),
        Route(f"{BASE}index.html", _index),
        Route(f"{BASE}ui.js", _asset(site, "ui.js")),
        Route(f"{BASE}sw.js", _asset(site, "sw.js", WORKER_CSP)),
        Route("/about/replay/LICENSE", _file(site, licence_file)),
        Route("/about/replay/source.tgz", _file(site, source_file)),
    ]
    return SecurityHeaders(Starlette(routes=routes), REPLAY_CSP, REPLAY_HEADERS)
