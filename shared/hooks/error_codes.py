"""Error codes a capture can end with, what each means for a reader, and whether a retry can
help. One table, read by the hooks (which exit code to use), the runner (whether a hard
failure gets a retry_at) and the writer (whether to schedule another attempt).

A code is `E_<PLUGIN>_<WHAT>`; the table is keyed by `<WHAT>`, so every plugin's codes share
it (`E_FETCH_STALLED` and `E_MEDIA_STALLED` mean the same). HTTP codes are
`E_<PLUGIN>_HTTP_<status>` (`E_FETCH_HTTP_5XX` for any 5xx).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Outcome = Literal["failed", "partial"]


@dataclass(frozen=True)
class ErrorKind:
    """One kind of ending."""

    reason: str
    """Short name a reader sees (timeout, stalled, truncated_body, ...)."""
    retry: bool
    """True when another attempt later can plausibly succeed."""
    outcome: Outcome
    """`partial` when something useful was kept, `failed` otherwise."""
    meaning: str
    """One line for the docs and the UI."""


KINDS: dict[str, ErrorKind] = {
    "TIMEOUT": ErrorKind(
        "timeout",
        True,
        "failed",
        "the whole fetch, the connect or the response headers took too long",
    ),
    "STALLED": ErrorKind(
        "stalled", True, "failed", "no byte (or too few bytes) arrived for the idle timeout"
    ),
    "TRUNCATED": ErrorKind(
        "truncated_body",
        True,
        "failed",
        "the connection ended before the body did (shorter than its Content-Length)",
    ),
    "TOO_LARGE": ErrorKind(
        "too_large",
        False,
        "partial",
        "the body passed the byte cap: its first bytes are kept, marked truncated",
    ),
    "BOMB": ErrorKind(
        "too_large",
        False,
        "failed",
        "compressed body expands past the ratio or size limit (a decompression bomb)",
    ),
    "NOT_HTML": ErrorKind(
        "not_html", False, "failed", "not a web page (binary, archive, media); type and size kept"
    ),
    "RESOURCE_LIMIT": ErrorKind(
        "resource_limit",
        False,
        "failed",
        "the hook passed its memory or CPU-time limit, or the page's renderer its memory"
        " limit (browser hooks), and was stopped",
    ),
    "DECLINED": ErrorKind(
        "declined",
        False,
        "failed",
        "the page asked not to be archived (X-No-Archive header or meta): nothing kept",
    ),
    "REFUSED": ErrorKind(
        "refused", False, "failed", "target not allowed (scheme, private or local address)"
    ),
    "DNS": ErrorKind("dns", True, "failed", "the name lookup failed for now (no DNS answer)"),
    "REDIRECTS": ErrorKind("redirects", False, "failed", "too many redirects"),
    "FAILED": ErrorKind(
        "network_error", True, "failed", "could not connect, or the connection failed"
    ),
    "HTTP_5XX": ErrorKind("http_error", True, "failed", "the server answered 5xx"),
    "HTTP_4XX": ErrorKind(
        "http_error", False, "failed", "the server answered 4xx (408 and 429 are retried)"
    ),
    "BLOCKED": ErrorKind(
        "blocked", True, "failed", "the site served a block page (403/429, anti-bot) instead"
    ),
    "LOGIN_WALL": ErrorKind("login_wall", False, "failed", "the site served only a login page"),
    "AGE_GATE": ErrorKind("age_gate", False, "failed", "the site served only its over-18 gate"),
    "NOT_FOUND": ErrorKind("not_found", False, "failed", "the page does not exist (any more)"),
    "NO_VIDEO": ErrorKind("no_video", False, "failed", "no video on the page (media)"),
    "PRIVATE": ErrorKind("private", False, "failed", "the video is private (media)"),
    "REMOVED": ErrorKind("removed", False, "failed", "the video was removed or is unavailable"),
    "GEO_BLOCKED": ErrorKind(
        "geo_blocked", False, "failed", "the video is not available from this location (media)"
    ),
    "LOGIN_REQUIRED": ErrorKind(
        "login_required", False, "failed", "the video needs a login or age confirmation (media)"
    ),
    "RATE_LIMITED": ErrorKind(
        "rate_limited",
        True,
        "failed",
        "the site answered 'too many requests': retried later, its whole domain backs off",
    ),
    "NETWORK": ErrorKind(
        "network_error", True, "failed", "a network error or stall during the download (media)"
    ),
    "STOPPED": ErrorKind(
        "stopped", True, "failed", "the download was stopped (timeout, shutdown, worker gone)"
    ),
    "SPAWN": ErrorKind("hook_error", True, "failed", "the hook could not be started"),
    "CONFIG": ErrorKind("config_error", False, "failed", "a plugin setting is invalid"),
    "MISSING": ErrorKind(
        "binary_missing", False, "failed", "a binary the plugin needs is not installed"
    ),
    "UNRESPONSIVE": ErrorKind(
        "page_unresponsive",
        False,
        "failed",
        "the page's renderer is stuck in a script or crashed (browser hooks)",
    ),
    "SCRIPT": ErrorKind("page_script_error", False, "failed", "code run in the page threw"),
    "DOWNLOAD": ErrorKind(
        "download", False, "failed", "the URL is a file download, not a page (refused)"
    ),
    "BROWSER": ErrorKind(
        "browser_error", True, "failed", "the archiver's browser failed (crashed, restarting)"
    ),
    "NO_BROWSER": ErrorKind(
        "no_browser", False, "failed", "skipped: not run by an archiver with a browser"
    ),
    "NOT_LOADED": ErrorKind(
        "not_loaded", True, "failed", "skipped: the navigation left no document to capture"
    ),
    "PDF_DOCUMENT": ErrorKind(
        "pdf_document",
        False,
        "failed",
        "skipped: a PDF document, which Chromium's viewer shows without its content (the file"
        " is the raw response, its text the reader view)",
    ),
    "HTTP_ERROR": ErrorKind(
        "http_error", False, "failed", "skipped: the page is an HTTP error page (4xx/5xx)"
    ),
    "DEPENDENCY": ErrorKind(
        "dependency_failed",
        True,
        "failed",
        "a hook this one reads did not succeed; it runs again when that one is retried",
    ),
}
"""By the part after `E_<PLUGIN>_`."""

_CODE = re.compile(r"^E_[A-Z0-9]+?_(HTTP_(?P<status>\d{3}|5XX|4XX)|(?P<what>[A-Z_]+))$")
RETRIED_4XX = frozenset({"408", "425", "429"})
"""4xx answers that mean "try later"."""


def kind_of(error_code: str | None) -> ErrorKind | None:
    """The kind of an error code, or None for a code this table does not know."""
    if not error_code:
        return None
    if error_code == "E_BINARY_MISSING":
        return KINDS["MISSING"]
    m = _CODE.match(error_code)
    if m is None:
        return None
    status = m.group("status")
    if status is not None:
        if status.startswith("5"):
            return KINDS["HTTP_5XX"]
        if status in RETRIED_4XX:
            return ErrorKind("http_error", True, "failed", f"the server answered {status}")
        return KINDS["HTTP_4XX"]
    what = m.group("what") or ""
    # longest known suffix: E_MY_PLUGIN_STALLED -> STALLED
    for key in sorted(KINDS, key=len, reverse=True):
        if what == key or what.endswith("_" + key):
            return KINDS[key]
    return None


def retry_worthy(error_code: str | None) -> bool:
    """True when a retry can help; unknown codes (and none) are retried, as before."""
    kind = kind_of(error_code)
    return True if kind is None else kind.retry


VAGUE_REASONS = frozenset(
    {"timeout", "page_unresponsive", "browser_error", "not_loaded", "dependency_failed",
     "hook_error", "network_error"}
)  # fmt: skip
"""Reasons that say something went wrong but not what the server did: a browser hook's
timeout on a page whose server drips is less telling than the fetch's `stalled`."""


def telling(error_code: str | None) -> bool:
    """False for a code whose reason is vague (VAGUE_REASONS) or unknown, or no code."""
    reason = reason_of(error_code)
    return reason is not None and reason not in VAGUE_REASONS


def reason_of(error_code: str | None) -> str | None:
    """Short reader-facing name of a code (stalled, not_html, ...), None for none/unknown."""
    kind = kind_of(error_code)
    return None if kind is None else kind.reason
