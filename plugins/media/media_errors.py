"""What a yt-dlp failure means: an error code, and whether retrying can help.

Soft failures (recorded, never retried): no video on the page, private, removed, geo-blocked,
login required, refused target. Hard failures (retried with backoff): network errors, stalls,
server errors, and rate limits (E_MEDIA_RATE_LIMITED, on which the writer also backs off the
whole domain).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from yt_dlp.networking.exceptions import HTTPError, TransportError
from yt_dlp.utils import GeoRestrictedError, UnsupportedError


@dataclass(frozen=True)
class Failure:
    """How a download failed."""

    code: str
    soft: bool
    message: str


_RULES: tuple[tuple[str, bool, str], ...] = (
    ("E_MEDIA_RATE_LIMITED", False, r"HTTP Error 429|too many requests|rate.?limit"),
    (
        "E_MEDIA_GEO_BLOCKED",
        True,
        r"not available (in|from) your (country|location)|geo.?(restrict|block)",
    ),
    ("E_MEDIA_PRIVATE", True, r"private (video|account|post)|video is private|is private"),
    (
        "E_MEDIA_LOGIN_REQUIRED",
        True,
        r"sign in|log ?in (to|required)|login required|age.?restrict|confirm your age",
    ),
    (
        "E_MEDIA_REMOVED",
        True,
        r"removed|deleted|no longer available|video unavailable|has been terminated"
        r"|copyright|HTTP Error (404|410)",
    ),
    (
        "E_MEDIA_NO_VIDEO",
        True,
        r"unsupported url|no video formats|no (video|media) (found|in)"
        r"|requested format is not available|there.s no video",
    ),
    ("E_MEDIA_HTTP_4XX", True, r"HTTP Error 4\d\d"),
    (
        "E_MEDIA_NETWORK",
        False,
        r"timed? ?out|connection|network|incomplete ?read|HTTP Error 5\d\d|temporary failure"
        r"|reset by peer|name resolution|unable to download",
    ),
)
_COMPILED = tuple((code, soft, re.compile(pattern, re.I)) for code, soft, pattern in _RULES)


def _chain(exc: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in found:
        found.append(current)
        exc_info = getattr(current, "exc_info", None)
        inner = exc_info[1] if isinstance(exc_info, tuple) and len(exc_info) > 1 else None
        current = inner or current.__cause__ or current.__context__
    return found


def classify(exc: BaseException) -> Failure:
    """Map a yt-dlp exception (DownloadError and what it wraps) to a Failure."""
    chain = _chain(exc)
    message = " / ".join(dict.fromkeys(str(e) for e in chain if str(e)))[:1000] or repr(exc)
    for e in chain:
        if isinstance(e, GeoRestrictedError):
            return Failure("E_MEDIA_GEO_BLOCKED", True, message)
        if isinstance(e, UnsupportedError):
            return Failure("E_MEDIA_NO_VIDEO", True, message)
        if isinstance(e, HTTPError) and e.status == 429:
            return Failure("E_MEDIA_RATE_LIMITED", False, message)
    for code, soft, regex in _COMPILED:
        if regex.search(message):
            return Failure(code, soft, message)
    if any(isinstance(e, (TransportError, TimeoutError, ConnectionError)) for e in chain):
        return Failure("E_MEDIA_NETWORK", False, message)
    return Failure("E_MEDIA_FAILED", False, message)
