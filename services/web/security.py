"""Security headers on every response, and the rules for serving archived bytes safely.

Archived HTML never runs in the UI's origin: pages get a strict CSP with no inline script
at all; artifacts that a browser could execute (HTML, DOM, SVG, XML, anything unknown) are
sent as ``attachment`` with ``application/octet-stream`` and a ``sandbox`` CSP, whether
proxied or through a presigned S3 URL (``response-content-disposition`` /
``response-content-type`` make S3 send those headers).
"""

from __future__ import annotations

import re
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAGE_CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data: {s3}; media-src 'self' {s3}; "
    "font-src 'self'; form-action 'self'; frame-src 'self'; base-uri 'none'; "
    "frame-ancestors 'none'; object-src 'none'"
)
ARTIFACT_CSP = "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'"
HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=(), interest-cohort=()",
}
INLINE_TYPES = frozenset(
    {
        "image/png",
        "image/jpeg",
        "image/webp",
        "image/gif",
        "video/mp4",
        "video/webm",
        "audio/mpeg",
        "audio/mp4",
        "audio/webm",
        "application/pdf",
        "text/plain",
        "application/json",
    }
)
"""Types a browser renders without running anything from the archived page."""
_FILENAME_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def page_csp(s3_origin: str | None) -> str:
    """The CSP of every page; screenshots and videos may come from the S3 origin."""
    return PAGE_CSP.format(s3=s3_origin or "").replace("  ", " ")


def delivery(content_type: str | None, filename: str) -> tuple[str, str]:
    """(Content-Type, Content-Disposition) to serve an artifact with."""
    base = (content_type or "").split(";")[0].strip().lower()
    name = _FILENAME_SAFE.sub("_", filename)[-120:] or "artifact"
    if base in INLINE_TYPES:
        charset = "; charset=utf-8" if base.startswith("text/") else ""
        return base + charset, f'inline; filename="{name}"'
    return "application/octet-stream", f'attachment; filename="{name}"'


class SecurityHeaders:
    """ASGI middleware: CSP and friends on every response unless the route set its own."""

    def __init__(self, app: ASGIApp, csp: str, headers: dict[str, str] | None = None) -> None:
        self.app = app
        self.csp = csp.encode()
        self.headers = HEADERS if headers is None else headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers: list[Any] = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                if b"content-security-policy" not in present:
                    headers.append((b"content-security-policy", self.csp))
                for name, value in self.headers.items():
                    if name.encode() not in present:
                        headers.append((name.encode(), value.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
