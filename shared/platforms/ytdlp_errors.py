"""What a yt-dlp failure means: the `<WHAT>` of an error code (shared.hooks.error_codes
says whether a retry can help), for the media hook's downloads and the platform steps'
extractions alike.

Not retried: no video on the page, private, removed, geo-blocked, login required, another
4xx. Retried with backoff: network errors, stalls, server errors, and rate limits
(RATE_LIMITED, on which the writer also backs off the whole domain).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shared.fetching import retry_after as retry_wait
from shared.hooks.error_codes import What, code


@dataclass(frozen=True)
class Failure:
    """How an extraction or download failed."""

    what: What
    """The `<WHAT>` of the error code: RATE_LIMITED, GEO_BLOCKED, PRIVATE, LOGIN_REQUIRED,
    REMOVED, NO_VIDEO, HTTP_4XX, NETWORK or FAILED."""
    message: str
    wait_s: float | None = None
    """For RATE_LIMITED: the wait the 429 asked for (its Retry-After), when it said."""

    def code(self, prefix: str) -> str:
        """`E_<PREFIX>_<WHAT>`."""
        return code(prefix, self.what)


_RULES: tuple[tuple[What, str], ...] = (
    ("RATE_LIMITED", r"HTTP Error 429|too many requests|rate.?limit"),
    ("GEO_BLOCKED", r"not available (in|from) your (country|location)|geo.?(restrict|block)"),
    ("PRIVATE", r"private (video|account|post)|video is private|is private|protected tweet"),
    (
        "LOGIN_REQUIRED",
        r"sign in|log ?in (to|required)|login required|requires? (a )?log ?in|registered users"
        r"|age.?restrict|confirm your age|requires authentication|cookies",
    ),
    (
        "REMOVED",
        r"removed|deleted|no longer available|video unavailable|has been terminated"
        r"|copyright|suspended|HTTP Error (404|410)",
    ),
    (
        "NO_VIDEO",
        r"unsupported url|no video formats|no (video|media) (found|in|could be found)"
        r"|requested format is not available|there.s no video",
    ),
    ("HTTP_4XX", r"HTTP Error 4\d\d"),
    (
        "NETWORK",
        r"timed? ?out|connection|network|incomplete ?read|HTTP Error 5\d\d|temporary failure"
        r"|reset by peer|name resolution|unable to download",
    ),
)
_COMPILED = tuple((what, re.compile(pattern, re.I)) for what, pattern in _RULES)


def _chain(exc: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in found:
        found.append(current)
        exc_info = getattr(current, "exc_info", None)
        inner = exc_info[1] if isinstance(exc_info, tuple) and len(exc_info) > 1 else None
        current = inner or current.__cause__ or current.__context__
    return found


def _asked_wait(error: object) -> float | None:
    """The wait a yt-dlp HTTPError's response asked for, if it kept its headers."""
    headers = getattr(getattr(error, "response", None), "headers", None)
    try:
        return retry_wait.of_headers(list(headers.items())) if headers is not None else None
    except (AttributeError, TypeError, ValueError):
        return None


def classify(exc: BaseException) -> Failure:
    """Map a yt-dlp exception (DownloadError and what it wraps) to a Failure."""
    # imported here: a yt-dlp exception to classify means yt-dlp is loaded already, and the
    # processes that import this module and never run yt-dlp are spared it (shared.platforms.ytdlp)
    from yt_dlp.networking.exceptions import HTTPError, TransportError
    from yt_dlp.utils import GeoRestrictedError, UnsupportedError

    chain = _chain(exc)
    message = " / ".join(dict.fromkeys(str(e) for e in chain if str(e)))[:1000] or repr(exc)
    for e in chain:
        if isinstance(e, GeoRestrictedError):
            return Failure("GEO_BLOCKED", message)
        if isinstance(e, UnsupportedError):
            return Failure("NO_VIDEO", message)
        if isinstance(e, HTTPError) and e.status == 429:
            return Failure("RATE_LIMITED", message, _asked_wait(e))
    for what, regex in _COMPILED:
        if regex.search(message):
            return Failure(what, message)
    if any(isinstance(e, (TransportError, TimeoutError, ConnectionError)) for e in chain):
        return Failure("NETWORK", message)
    return Failure("FAILED", message)
