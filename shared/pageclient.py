"""Client of the archiver's page protocol: how a hook reaches the snapshot's browser page.

The archiver keeps one warm Chromium and gives each snapshot its own browser context and
page. It listens on a Unix socket in the snapshot's scratch folder and hands the path to
every hook in the `PAGE_SOCKET` env var. The protocol is line-delimited JSON, one request
and one response per line, in order, on one connection (plugins/README.md documents it):

    -> {"id": 1, "op": "navigate", "url": "https://example.com/", "timeout": 30}
    <- {"id": 1, "ok": true, "result": {"status": 200, "final_url": "...", ...}}
    <- {"id": 2, "ok": false, "error": {"code": "E_PAGE_TIMEOUT", "message": "..."}}

Binary results (screenshot, PDF, DOM) are written by the archiver to an absolute `path` the
hook names inside the snapshot folder, never sent through the socket. Any language can speak
it; this module is the Python client. It imports only the standard library, so a hook
forked from the pre-warmed host pays nothing for it.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Callable
from typing import Any

from shared.fetching.sniffing import media_type
from shared.hooks.error_codes import What, code

PROTOCOL_VERSION = 1
SOCKET_ENV = "PAGE_SOCKET"
"""Env var holding the socket path, set by the archiver for every hook of a snapshot."""
OPS = (
    "state",
    "navigate",
    "settle",
    "wait",
    "evaluate",
    "lazy",
    "content",
    "screenshot",
    "pdf",
    "responses",
    "traffic",
)
"""The operations the archiver answers (see plugins/README.md for their arguments)."""

E_NO_BROWSER = "E_PAGE_NO_BROWSER"
"""No page socket: the hook does not run inside an archiver with a browser."""
E_PROTOCOL = "E_PAGE_PROTOCOL"
"""Malformed request or response, or the connection dropped."""
E_TIMEOUT = "E_PAGE_TIMEOUT"
"""The operation did not finish within its timeout."""
E_REFUSED = "E_PAGE_REFUSED"
"""The target policy refused the page's address (production mode, private address)."""
E_NAVIGATION = "E_PAGE_NAVIGATION"
"""The browser could not load the page (connection, TLS, too many redirects, ...)."""
E_DNS = "E_PAGE_DNS"
"""The page's host name could not be resolved for now (no DNS answer): retried later."""
E_NO_HOST = "E_PAGE_NO_HOST"
"""The page's host name does not exist (the DNS says so): not retried, as for the raw
fetch."""
E_TRUNCATED = "E_PAGE_TRUNCATED"
"""The main document's body broke off after its response (the byte cap, or the server
closed early): the page holds what arrived."""
E_DOWNLOAD = "E_PAGE_DOWNLOAD"
"""The URL is a download, not a page (downloads are refused)."""
E_NOT_LOADED = "E_PAGE_NOT_LOADED"
"""The operation needs a loaded document and there is none (navigation failed)."""
E_UNRESPONSIVE = "E_PAGE_UNRESPONSIVE"
"""The page's renderer is stuck (an endless script) or crashed."""
E_RESOURCE_LIMIT = "E_PAGE_RESOURCE_LIMIT"
"""The page's renderer passed the archiver's per-page memory limit and was stopped."""
E_BROWSER = "E_PAGE_BROWSER"
"""The browser failed (crashed, restarting); the hook should fail hard and be retried."""
E_BAD_REQUEST = "E_PAGE_BAD_REQUEST"
"""A bad argument (unknown op, path outside the snapshot folder, ...)."""
E_SCRIPT = "E_PAGE_SCRIPT"
"""An evaluated expression threw."""


class PageError(Exception):
    """An error answer (or a transport failure), with its protocol error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class PageClient:
    """One connection to the snapshot's page. Use as a context manager."""

    def __init__(self, path: str | None = None, *, connect_timeout: float = 5.0) -> None:
        path = path if path is not None else os.environ.get(SOCKET_ENV)
        if not path:
            raise PageError(E_NO_BROWSER, f"{SOCKET_ENV} is not set: no browser for this hook")
        self.path = path
        self._next_id = 0
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(connect_timeout)
        dir_fd = None
        try:
            address, dir_fd = unix_address(path)
            sock.connect(address)
        except OSError as exc:
            sock.close()
            raise PageError(E_NO_BROWSER, f"cannot connect to {path}: {exc}") from exc
        finally:
            if dir_fd is not None:
                os.close(dir_fd)
        self._sock = sock
        self._file = sock.makefile("rb")

    def __enter__(self) -> PageClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (the page stays open for the next hook)."""
        self._file.close()
        self._sock.close()

    def call(self, op: str, timeout: float = 60.0, **args: Any) -> dict[str, Any]:
        """Send one request and wait for its answer; raises PageError on an error answer.

        `timeout` (seconds) bounds the operation on the archiver's side; the socket waits a
        little longer so the archiver's own timeout answer arrives first."""
        self._next_id += 1
        req = {"id": self._next_id, "op": op, "timeout": timeout, **args}
        self._sock.settimeout(timeout + 10.0)
        try:
            self._sock.sendall(json.dumps(req).encode() + b"\n")
            line = self._file.readline()
        except OSError as exc:
            raise PageError(E_PROTOCOL, f"{op}: {exc}") from exc
        if not line:
            raise PageError(E_PROTOCOL, f"{op}: the archiver closed the connection")
        try:
            resp = json.loads(line)
        except ValueError as exc:
            raise PageError(E_PROTOCOL, f"{op}: bad response line: {exc}") from exc
        if not resp.get("ok"):
            err = resp.get("error") or {}
            raise PageError(str(err.get("code", E_PROTOCOL)), str(err.get("message", "")))
        result = resp.get("result") or {}
        assert isinstance(result, dict)
        return result

    # Typed shortcuts (each is one `call`).

    def state(self, timeout: float = 10.0) -> dict[str, Any]:
        """{"navigated": bool, "navigation": {...} | null, "url": str, "unresponsive": bool}."""
        return self.call("state", timeout=timeout)

    def navigate(self, url: str, timeout: float = 60.0, wait_until: str = "load") -> dict[str, Any]:
        """Load url in the page: status, final URL, headers, redirect chain, refused requests."""
        return self.call("navigate", timeout=timeout, url=url, wait_until=wait_until)

    def settle(
        self,
        timeout: float = 30.0,
        max_ms: int = 5000,
        quiet_ms: int = 300,
        horizon_ms: int = 3000,
    ) -> dict[str, Any]:
        """Wait, at most max_ms, until the loaded page has been quiet for quiet_ms (no request
        in flight, no timer due within horizon_ms pending, no element added or removed):
        {"settled", "waited_ms", and "pending" {"requests", "timers"} or "reason" if not}."""
        return self.call(
            "settle", timeout=timeout, max_ms=max_ms, quiet_ms=quiet_ms, horizon_ms=horizon_ms
        )

    def wait(self, timeout: float = 30.0, until: str | None = None, ms: int = 0) -> dict[str, Any]:
        """Wait for a load state (load, domcontentloaded, networkidle) and/or ms milliseconds."""
        return self.call("wait", timeout=timeout, until=until, ms=ms)

    def evaluate(self, expression: str, arg: Any = None, timeout: float = 30.0) -> Any:
        """Evaluate a JS expression or function in the page; returns its JSON value."""
        return self.call("evaluate", timeout=timeout, expression=expression, arg=arg)["value"]

    def lazy(self, timeout: float = 10.0) -> dict[str, int]:
        """How the page loads content lazily: {"observed" (elements handed to an
        IntersectionObserver), "scroll_listeners", "lazy_elements"}; all 0 on a static page."""
        return self.call("lazy", timeout=timeout)

    def content(self, path: str, timeout: float = 30.0) -> dict[str, Any]:
        """Write the rendered DOM (UTF-8 HTML) to path: {"path", "bytes", "sha256"}."""
        return self.call("content", timeout=timeout, path=os.path.abspath(path))

    def screenshot(
        self,
        path: str,
        timeout: float = 30.0,
        full_page: bool = True,
        max_height: int = 0,
        scale: float = 1.0,
    ) -> dict[str, Any]:
        """Write a PNG to path (full page, height capped at max_height CSS px when > 0,
        `scale` image px a CSS px, 0 < scale <= 1): {"path", "bytes", "sha256", "width",
        "height" (the image's), "scale", "page_height", "clipped"}."""
        return self.call(
            "screenshot",
            timeout=timeout,
            path=os.path.abspath(path),
            full_page=full_page,
            max_height=max_height,
            scale=scale,
        )

    def pdf(self, path: str, timeout: float = 30.0) -> dict[str, Any]:
        """Print the page to a PDF at path: {"path", "bytes", "sha256", "markers_moved"}."""
        return self.call("pdf", timeout=timeout, path=os.path.abspath(path))

    def responses(self, timeout: float = 10.0) -> dict[str, Any]:
        """The response log: {"responses": [...], "refused": [...], "events": [...]}."""
        return self.call("responses", timeout=timeout)

    def traffic(self, path: str, timeout: float = 60.0) -> dict[str, Any]:
        """Finish the snapshot's browser WARC (every request and response of the page so
        far) and have it written to path: {"path", "bytes", "sha256", "exchanges",
        "truncated"}, or {"path": None, ...} when nothing was recorded."""
        return self.call("traffic", timeout=timeout, path=os.path.abspath(path))

    def loaded_document(self, url: str, timeout: float = 60.0) -> dict[str, Any]:
        """The page's navigation, navigating to url first if no hook did (a hook retried on
        its own). Raises PageError(E_NOT_LOADED, ...) when the navigation left no document."""
        st = self.state()
        nav = st.get("navigation")
        if not st.get("navigated"):
            nav = self.navigate(url, timeout=timeout)
        if not isinstance(nav, dict) or not nav.get("document"):
            why = (nav or {}).get("error") or {"code": "?", "message": "no document"}
            raise PageError(E_NOT_LOADED, f"no document: {why.get('code')}: {why.get('message')}")
        return nav


def unix_address(path: str) -> tuple[str, int | None]:
    """A bindable/connectable address for path and the fd to close after use: Unix socket
    paths are limited to 107 bytes, so a longer one goes through its folder's /proc/self/fd
    entry (Linux), which stays valid while that fd is open."""
    if len(path.encode()) < 100:
        return path, None
    fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY | os.O_DIRECTORY)
    return f"/proc/self/fd/{fd}/{os.path.basename(path)}", fd


def hook_args() -> tuple[str, float]:
    """(--url, seconds the hook may use for page operations): its `--timeout` (else
    `<PLUGIN>_TIMEOUT`/`TIMEOUT`, else 60) less a second to report before the runner's kill."""
    url, timeout = "", 0.0
    for arg in sys.argv[1:]:
        if arg.startswith("--url="):
            url = arg[len("--url=") :]
        elif arg.startswith("--timeout="):
            timeout = float(arg[len("--timeout=") :])
    if not timeout:
        timeout = float(os.environ.get("TIMEOUT") or 60)
    return url, max(1.0, timeout - 1.0)


PAGE_FAULTS: dict[str, What] = {
    E_UNRESPONSIVE: "UNRESPONSIVE",
    E_RESOURCE_LIMIT: "RESOURCE_LIMIT",
    E_SCRIPT: "SCRIPT",
    E_BAD_REQUEST: "BAD_REQUEST",
}
"""Errors that come from the page (or the hook) itself: retrying cannot help."""


def document_type(nav: dict[str, Any]) -> str:
    """The media type of the navigated document (its Content-Type, lower-case, without
    parameters; '' when it has none)."""
    for name, value in nav.get("headers") or []:
        if str(name).lower() == "content-type":
            return media_type(str(value))
    return ""


def run_page_capture(plugin: str, capture: Callable[[PageClient, str, float], str]) -> int:
    """The body of a DOM-capture hook (step 5x): connect, make sure a document is loaded,
    run `capture(page, url, timeout)` (it returns the output_str), print the ArchiveResult.

    no browser / no document     -> skipped, E_<PLUGIN>_NO_BROWSER / E_<PLUGIN>_NOT_LOADED
    an HTTP error page (4xx/5xx) -> skipped, E_<PLUGIN>_HTTP_ERROR: an error page is not
                                    archived as if it were the content (navigate records it)
    a PDF document               -> skipped, E_<PLUGIN>_PDF_DOCUMENT: Chromium's PDF viewer
                                    renders nothing of it a capture keeps
    a stuck page, a script error, a page past the memory limit
                                 -> failed, soft (exit 0), E_<PLUGIN>_<reason>
    a timeout, a browser failure -> failed, hard (exit 1: retried), E_<PLUGIN>_TIMEOUT / _FAILED
    Returns the exit status."""
    from shared.hooks.records import ArchiveResultRecord, emit

    prefix = plugin.upper()
    url, timeout = hook_args()
    try:
        with PageClient() as page:
            nav = page.loaded_document(url, timeout=timeout)
            status = nav.get("status")
            if document_type(nav) == "application/pdf":
                emit(
                    ArchiveResultRecord(
                        status="skipped",
                        output_str="a PDF document: Chromium's viewer shows nothing of it to"
                        " capture (the fetch plugin keeps the file, readable its text)",
                        error_code=code(prefix, "PDF_DOCUMENT"),
                    )
                )
                return 0
            if isinstance(status, int) and status >= 400:
                emit(
                    ArchiveResultRecord(
                        status="skipped",
                        output_str=f"HTTP {status} error page: not captured",
                        error_code=code(prefix, "HTTP_ERROR"),
                    )
                )
                return 0
            output = capture(page, url, timeout)
    except PageError as exc:
        print(f"{plugin}: {exc}", file=sys.stderr)
        if exc.code in (E_NO_BROWSER, E_NOT_LOADED):
            skip: What = "NO_BROWSER" if exc.code == E_NO_BROWSER else "NOT_LOADED"
            emit(
                ArchiveResultRecord(
                    status="skipped", output_str=exc.message[:500], error_code=code(prefix, skip)
                )
            )
            return 0
        soft = exc.code in PAGE_FAULTS
        reason: What = PAGE_FAULTS.get(exc.code) or (
            "TIMEOUT" if exc.code == E_TIMEOUT else "FAILED"
        )
        emit(
            ArchiveResultRecord(
                status="failed", output_str=exc.message[:500], error_code=code(prefix, reason)
            )
        )
        return 0 if soft else 1
    emit(ArchiveResultRecord(status="succeeded", output_str=output))
    return 0
