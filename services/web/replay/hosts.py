"""Which requests are the replay origin's: those whose ``Host`` is its host, and only those.

One listener serves both origins (one port, the same workers); the request's host name picks
the app. The UI's routes are never answered on the replay host, and the replay's never on
any other: a replayed page's scripts, running in the replay origin, reach no UI route and no
UI cookie. A proxy in front must pass the browser's ``Host`` through (docs/operations.md).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

_DEFAULT_PORT_SUFFIXES = (":80", ":443")


def request_host(scope: Scope) -> str:
    """The request's ``Host`` header, lower-cased, without a default port."""
    for name, value in scope.get("headers", []):
        if name == b"host":
            host: str = bytes(value).decode("latin-1").strip().lower()
            for suffix in _DEFAULT_PORT_SUFFIXES:
                host = host.removesuffix(suffix)
            return host
    return ""


class ReplayHost:
    """ASGI middleware: requests for ``host`` go to ``replay``, every other to ``app``."""

    def __init__(self, app: ASGIApp, replay: ASGIApp, host: str) -> None:
        self.app = app
        self.replay = replay
        self.host = host.lower()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and request_host(scope) == self.host:
            await self.replay(scope, receive, send)
            return
        await self.app(scope, receive, send)
