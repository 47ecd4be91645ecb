"""Error codes a capture can end with, what each means for a reader, and whether a retry can
help: the one table, and the only channel of retries. The hooks build their codes with
`code`/`http_code`; the runner asks `retries` whether a failed result gets a retry_at (the
hook's exit code does not decide it), and the writer asks `retry_worthy`, `final` and
`backs_off_domain` what an ended attempt means.
`tests/hooks/test_error_table.py` scans the tree: every code emitted is in the table, and the
table holds no kind nothing emits.

A code is `E_<PLUGIN>_<WHAT>`; the table is keyed by `<WHAT>`, so every plugin's codes share
it (`E_FETCH_STALLED` and `E_MEDIA_STALLED` mean the same). HTTP codes are
`E_<PLUGIN>_HTTP_<status>` (`E_FETCH_HTTP_5XX` for any 5xx).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from http import HTTPStatus
from typing import Literal

What = Literal[
    "TIMEOUT", "STALLED", "TRUNCATED", "TOO_LARGE", "BOMB", "NOT_HTML", "RESOURCE_LIMIT",
    "DECLINED", "REFUSED", "NO_HOST", "DNS", "REDIRECTS", "FAILED", "HTTP_5XX", "HTTP_4XX",
    "HTTP_LATER", "HTTP_429", "BLOCKED", "LOGIN_WALL", "AGE_GATE", "NOT_FOUND", "NO_VIDEO",
    "PRIVATE", "REMOVED", "GEO_BLOCKED", "LOGIN_REQUIRED", "RATE_LIMITED", "NETWORK", "STOPPED",
    "SPAWN", "CONFIG", "MISSING", "UNRESPONSIVE", "SCRIPT", "BAD_REQUEST", "NAVIGATION",
    "PROTOCOL", "DOWNLOAD", "BROWSER", "NO_BROWSER", "NOT_LOADED", "PDF_DOCUMENT", "HTTP_ERROR",
    "DEPENDENCY", "LOGGED_OUT", "CONSENT_WALL", "BAD_ANSWER", "UNAVAILABLE", "NO_POST",
]  # fmt: skip
"""The `<WHAT>` of a code: the keys of KINDS (a test keeps the two equal)."""


@dataclass(frozen=True)
class ErrorKind:
    """One kind of ending."""

    reason: str
    """Short name a reader sees (timeout, stalled, truncated_body, ...)."""
    retry: bool
    """True when another attempt later can plausibly succeed."""
    meaning: str
    """One line for the docs and the UI."""
    backoff: bool = False
    """True when the site asked us to slow down: the writer backs off its whole registrable
    domain (the scheduler dispatches none of its jobs for a while)."""


KINDS: dict[What, ErrorKind] = {
    "TIMEOUT": ErrorKind(
        "timeout",
        True,
        "the whole fetch, the connect or the response headers took too long",
    ),
    "STALLED": ErrorKind(
        "stalled", True, "no byte (or too few bytes) arrived for the idle timeout"
    ),
    "TRUNCATED": ErrorKind(
        "truncated_body",
        True,
        "the connection ended before the body did (shorter than its Content-Length)",
    ),
    "TOO_LARGE": ErrorKind(
        "too_large",
        False,
        "the body passed the byte cap: its first bytes are kept, marked truncated",
    ),
    "BOMB": ErrorKind(
        "too_large",
        False,
        "compressed body expands past the ratio or size limit (a decompression bomb)",
    ),
    "NOT_HTML": ErrorKind(
        "not_html", False, "not a web page (binary, archive, media); type and size kept"
    ),
    "RESOURCE_LIMIT": ErrorKind(
        "resource_limit",
        False,
        "the hook passed its memory or CPU-time limit, or the page's renderer its memory"
        " limit (browser hooks), and was stopped",
    ),
    "DECLINED": ErrorKind(
        "declined",
        False,
        "the page asked not to be archived (X-No-Archive header or meta): nothing kept",
    ),
    "REFUSED": ErrorKind("refused", False, "target not allowed (scheme, private or local address)"),
    "NO_HOST": ErrorKind(
        "no_such_host", False, "the site's name does not exist (DNS: no such domain)"
    ),
    "DNS": ErrorKind("dns", True, "the name lookup failed for now (no DNS answer)"),
    "REDIRECTS": ErrorKind("redirects", False, "too many redirects"),
    "FAILED": ErrorKind("network_error", True, "could not connect, or the connection failed"),
    "HTTP_5XX": ErrorKind("http_error", True, "the server answered 5xx"),
    "HTTP_4XX": ErrorKind(
        "http_error", False, "the server answered 4xx (408, 425 and 429 are retried)"
    ),
    "HTTP_LATER": ErrorKind("http_error", True, "the server answered 408 or 425: try again later"),
    "HTTP_429": ErrorKind(
        "rate_limited",
        True,
        "the server answered 429 (too many requests): retried later, its whole domain backs off",
        backoff=True,
    ),
    "BLOCKED": ErrorKind("blocked", True, "the site served a block page (403, anti-bot) instead"),
    "LOGIN_WALL": ErrorKind("login_wall", False, "the site served only a login page"),
    "LOGGED_OUT": ErrorKind(
        "logged_out",
        False,
        "the operator's cookies for the site were sent and a login wall came back: the session"
        " expired (renew the site's file in COOKIES_DIR)",
    ),
    "CONSENT_WALL": ErrorKind("consent_wall", False, "the site served only its consent gate"),
    "AGE_GATE": ErrorKind("age_gate", False, "the site served only its over-18 gate"),
    "NOT_FOUND": ErrorKind("not_found", False, "the page does not exist (any more)"),
    "BAD_ANSWER": ErrorKind(
        "bad_answer",
        True,
        "the platform's API answered something unusable (HTML where JSON was expected,"
        " malformed or empty JSON)",
    ),
    "UNAVAILABLE": ErrorKind(
        "unavailable",
        True,
        "the platform shows the post as unavailable without saying why",
    ),
    "NO_POST": ErrorKind("no_post", False, "no step of the platform's chain found a post"),
    "NO_VIDEO": ErrorKind("no_video", False, "no video on the page (media)"),
    "PRIVATE": ErrorKind("private", False, "the video or post is private or protected"),
    "REMOVED": ErrorKind("removed", False, "the video or post was removed, deleted or suspended"),
    "GEO_BLOCKED": ErrorKind(
        "geo_blocked", False, "the video is not available from this location (media)"
    ),
    "LOGIN_REQUIRED": ErrorKind(
        "login_required", False, "the video needs a login or age confirmation (media)"
    ),
    "RATE_LIMITED": ErrorKind(
        "rate_limited",
        True,
        "the site answered 'too many requests': retried later, its whole domain backs off",
        backoff=True,
    ),
    "NETWORK": ErrorKind(
        "network_error", True, "a network error or stall during the download (media)"
    ),
    "STOPPED": ErrorKind(
        "stopped", True, "the download was stopped (timeout, shutdown, worker gone)"
    ),
    "SPAWN": ErrorKind("hook_error", True, "the hook could not be started"),
    "CONFIG": ErrorKind("config_error", False, "a plugin setting is invalid"),
    "MISSING": ErrorKind("binary_missing", False, "a binary the plugin needs is not installed"),
    "UNRESPONSIVE": ErrorKind(
        "page_unresponsive",
        False,
        "the page's renderer is stuck in a script or crashed (browser hooks)",
    ),
    "SCRIPT": ErrorKind("page_script_error", False, "code run in the page threw"),
    "BAD_REQUEST": ErrorKind(
        "hook_error",
        False,
        "the hook asked the page for something it cannot do (unknown operation, bad argument)",
    ),
    "NAVIGATION": ErrorKind(
        "network_error", True, "the browser could not load the page (net::ERR_...)"
    ),
    "PROTOCOL": ErrorKind(
        "browser_error", True, "the page socket's conversation broke (browser hooks)"
    ),
    "DOWNLOAD": ErrorKind("download", False, "the URL is a file download, not a page (refused)"),
    "BROWSER": ErrorKind(
        "browser_error", True, "the archiver's browser failed (crashed, restarting)"
    ),
    "NO_BROWSER": ErrorKind("no_browser", False, "skipped: not run by an archiver with a browser"),
    "NOT_LOADED": ErrorKind(
        "not_loaded", True, "skipped: the navigation left no document to capture"
    ),
    "PDF_DOCUMENT": ErrorKind(
        "pdf_document",
        False,
        "skipped: a PDF document, which Chromium's viewer shows without its content (the file"
        " is the raw response, its text the reader view)",
    ),
    "HTTP_ERROR": ErrorKind(
        "http_error", False, "skipped: the page is an HTTP error page (4xx/5xx)"
    ),
    "DEPENDENCY": ErrorKind(
        "dependency_failed",
        True,
        "a hook this one reads did not succeed; it runs again when that one is retried",
    ),
}
"""By the part after `E_<PLUGIN>_`."""

_CODE = re.compile(r"^E_[A-Z0-9]+?_(HTTP_(?P<status>\d{3}|5XX|4XX)|(?P<what>[A-Z_]+))$")
_PLUGIN = re.compile(r"^[A-Z0-9]+(_[A-Z0-9]+)*$")
BINARY_MISSING = "E_BINARY_MISSING"
"""The one code without a plugin: a binary a plugin declares is not installed (runner)."""


def _prefix(plugin: str) -> str:
    if not _PLUGIN.match(plugin):
        raise ValueError(f"bad plugin prefix {plugin!r}")
    return f"E_{plugin}_"


def code(plugin: str, what: What) -> str:
    """`E_<PLUGIN>_<WHAT>` (plugin as its settings prefix, e.g. `FETCH`); ValueError for a
    `what` the table does not know."""
    if what not in KINDS:
        raise ValueError(f"error kind {what!r} is not in shared/hooks/error_codes.py")
    return _prefix(plugin) + what


def http_code(plugin: str, status: int) -> str:
    """The code of an HTTP error answer: `E_<PLUGIN>_HTTP_5XX` for any 5xx, else
    `E_<PLUGIN>_HTTP_<status>`."""
    return code(plugin, "HTTP_5XX") if status >= 500 else f"{_prefix(plugin)}HTTP_{status}"


def what_of(error_code: str | None) -> What | None:
    """The table's key for a code, or None for a code this table does not know."""
    if not error_code:
        return None
    if error_code == BINARY_MISSING:
        return "MISSING"
    m = _CODE.match(error_code)
    if m is None:
        return None
    status = m.group("status")
    if status is not None:
        if status.startswith("5"):
            return "HTTP_5XX"
        if status == "429":
            return "HTTP_429"
        return "HTTP_LATER" if status in ("408", "425") else "HTTP_4XX"
    what = m.group("what") or ""
    # longest known suffix: E_MY_PLUGIN_STALLED -> STALLED
    for key in _BY_LENGTH:
        if what == key or what.endswith("_" + key):
            return key
    return None


_BY_LENGTH: list[What] = sorted(KINDS, key=len, reverse=True)


def kind_of(error_code: str | None) -> ErrorKind | None:
    """The kind of an error code, or None for a code this table does not know."""
    what = what_of(error_code)
    return None if what is None else KINDS[what]


def retry_worthy(error_code: str | None) -> bool:
    """True when a retry can help; unknown codes (and none) are retried."""
    kind = kind_of(error_code)
    return True if kind is None else kind.retry


def retries(error_code: str | None, *, crashed: bool) -> bool:
    """Whether a failed result is tried again: as its code's kind says. A code the table does
    not know (none in the product: tests/hooks/test_error_table.py) is retried only when the
    hook crashed (`crashed`: a non-zero exit, a signal, a timeout), not when it reported it."""
    kind = kind_of(error_code)
    return crashed if kind is None else kind.retry


def final(error_code: str | None) -> bool:
    """True for a telling code no later attempt would change (its kind is not retried): the
    attempt that found it is final, the other hooks' retryable failures follow from it."""
    kind = kind_of(error_code)
    return kind is not None and telling(error_code) and not kind.retry


def backs_off_domain(error_code: str | None) -> bool:
    """True when the code means the site asked us to slow down (429, rate limited)."""
    kind = kind_of(error_code)
    return kind is not None and kind.backoff


VAGUE_REASONS = frozenset(
    {"timeout", "page_unresponsive", "browser_error", "not_loaded", "dependency_failed",
     "hook_error", "network_error"}
)  # fmt: skip
"""Reasons that say something went wrong but not what the server did: a browser hook's
timeout on a page whose server drips is less telling than the fetch's `stalled`."""


WALL_WORDS: dict[str, str] = {
    "login_wall": "the site asked for a login",
    "logged_out": "the site asked for a login",
    "consent_wall": "the site showed only its consent gate",
    "age_gate": "the site asked to confirm an age",
    "blocked": "the site served a block page or a bot check",
}
"""What each wall reason says to a reader: a link whose capture met only a wall reads
`not archived: <words>` (the wall is evidence, never the archive)."""


LOGIN_REASONS = frozenset({"login_wall", "login_required"})
"""Reasons that say the site asked for a login (a login page, yt-dlp's "login required"):
met although the operator's cookies for the site were sent, they are LOGGED_OUT instead (the
session expired)."""


WALL_REASONS = frozenset(WALL_WORDS)
"""Reasons that say a page stood in front of the content (a login wall, a consent gate, a
bot check): when a platform's API gave the post itself, the wall the browser met is kept as
evidence only, and the link is archived with the post as its archive."""


def walled(error_code: str | None) -> bool:
    """True when the code says a wall stood in front of the content (WALL_REASONS)."""
    return reason_of(error_code) in WALL_REASONS


def opted_out(error_code: str | None) -> bool:
    """True when the code says the page asked not to be archived (X-No-Archive: DECLINED):
    nothing of that capture is kept, whichever step saw it."""
    return what_of(error_code) == "DECLINED"


def wall_words(error_code: str | None) -> str | None:
    """'the site asked for a login' for a wall's code (WALL_WORDS), None for another."""
    reason = reason_of(error_code)
    return None if reason is None else WALL_WORDS.get(reason)


def telling(error_code: str | None) -> bool:
    """False for a code whose reason is vague (VAGUE_REASONS) or unknown, or no code."""
    reason = reason_of(error_code)
    return reason is not None and reason not in VAGUE_REASONS


def reason_of(error_code: str | None) -> str | None:
    """Short reader-facing name of a code (stalled, not_html, ...), None for none/unknown."""
    kind = kind_of(error_code)
    return None if kind is None else kind.reason


READER_WORDS: dict[What, str] = {
    "TIMEOUT": "the site took too long to answer",
    "STALLED": "the site stopped sending",
    "TRUNCATED": "the site's answer was cut off",
    "TOO_LARGE": "it is larger than the archive keeps (its beginning was kept)",
    "BOMB": "its compressed content unpacks to far more than the archive keeps",
    "NOT_HTML": "it is a file, not a web page",
    "RESOURCE_LIMIT": "it needed more memory or time than the archive gives a page",
    "DECLINED": "the page asks not to be archived",
    "REFUSED": "its address is not one the archive may visit",
    "NO_HOST": "the site's name does not exist",
    "DNS": "the site's name could not be found",
    "REDIRECTS": "it sent us round too many redirects",
    "FAILED": "the site could not be reached",
    "HTTP_5XX": "the site had an error",
    "HTTP_4XX": "the site refused the request",
    "HTTP_LATER": "the site asked us to come back later",
    "HTTP_429": "the site asked us to slow down",
    "BLOCKED": WALL_WORDS["blocked"],
    "LOGIN_WALL": WALL_WORDS["login_wall"],
    "LOGGED_OUT": WALL_WORDS["logged_out"],
    "CONSENT_WALL": WALL_WORDS["consent_wall"],
    "AGE_GATE": WALL_WORDS["age_gate"],
    "NOT_FOUND": "it does not exist there (any more)",
    "BAD_ANSWER": "the platform's answer could not be read",
    "UNAVAILABLE": "the platform shows it as unavailable",
    "NO_POST": "the platform did not show the post",
    "NO_VIDEO": "there is no video on the page",
    "PRIVATE": "it is private",
    "REMOVED": "it was removed",
    "GEO_BLOCKED": "it is not available where the archive runs",
    "LOGIN_REQUIRED": "it needs a login",
    "RATE_LIMITED": "the site asked us to slow down",
    "NETWORK": "the connection failed during the download",
    "STOPPED": "the download was stopped before it ended",
    "SPAWN": "the archive had a problem of its own",
    "CONFIG": "the archive had a problem of its own",
    "MISSING": "the archive lacks a program it needs",
    "UNRESPONSIVE": "the page froze the browser",
    "SCRIPT": "a script on the page failed",
    "BAD_REQUEST": "the archive had a problem of its own",
    "NAVIGATION": "the browser could not load it",
    "PROTOCOL": "the archive's browser had a problem",
    "DOWNLOAD": "it is a file download, not a page",
    "BROWSER": "the archive's browser had a problem",
    "NO_BROWSER": "no browser was at hand",
    "NOT_LOADED": "nothing was loaded",
    "PDF_DOCUMENT": "it is a PDF (the file itself is kept)",
    "HTTP_ERROR": "the site answered with an error page",
    "DEPENDENCY": "a step it needs did not succeed",
}
"""What each kind of ending says to a reader of the public pages, in words: never a code, a
hook's file name or an exception's text (those are for the owner: `dla show`, the JSON)."""


def reader_words(error_code: str | None) -> str:
    """Why an attempt fell short, for a reader: 'the site answered 404 (Not Found)' for an
    HTTP code, the kind's READER_WORDS for another, 'something went wrong' for an unknown."""
    m = _CODE.match(error_code or "")
    status = m.group("status") if m else None
    if status is not None and status.isdigit():
        try:
            return f"the site answered {status} ({HTTPStatus(int(status)).phrase})"
        except ValueError:
            return f"the site answered {status}"
    what = what_of(error_code)
    return "something went wrong" if what is None else READER_WORDS[what]
