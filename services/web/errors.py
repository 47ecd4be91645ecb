"""Every error is a clear 4xx/5xx: JSON for the API, an HTML page for people; never a trace.

Responses encode JSON with ``ensure_ascii`` so odd input (lone surrogates included) can
never break the encoder, and validation errors never echo the input back.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from services.web.templating import render

log = logging.getLogger(__name__)


class SafeJSONResponse(JSONResponse):
    """JSON that any Python string can be encoded into (non-ASCII escaped)."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def wants_html(request: Request) -> bool:
    """True for a person's browser on a page; False for the JSON twins and API clients."""
    path = request.url.path
    if path.endswith((".json", ".jsonl", ".xml")) or path.startswith("/api/"):
        return False
    return "text/html" in request.headers.get("accept", "")


def problem(
    request: Request, status: int, message: str, headers: dict[str, str] | None = None
) -> Response:
    """An error answer in the form the client reads."""
    if wants_html(request):
        return render(
            request, "error.html", {"status": status, "message": message}, status, headers
        )
    return SafeJSONResponse({"error": message, "status": status}, status, headers)


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()) if p not in ("query", "path", "body"))
        parts.append(f"{where or 'request'}: {err.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def install(app: FastAPI) -> None:
    """Register the handlers."""

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        return problem(request, exc.status_code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        return problem(request, 400, _validation_message(exc))

    @app.exception_handler(Exception)
    async def crashed(request: Request, exc: Exception) -> Response:
        log.exception("web: %s %s failed", request.method, request.url.path)
        return problem(request, 500, "internal error (logged)")
