"""X-No-Archive opt-outs: does a page ask not to be archived? One detection, used by the fetch
plugin (raw headers and body), the navigate plugin (the browser's main-document headers
and the rendered page's meta tags), and every other step that reads the page itself: the
steps of Reddit's chain (its page and thread JSON, in a capture), the media hook's look at
the page before yt-dlp (`declined_by_answer`, on shared.platforms.http's answers).

A page opts out with an `X-No-Archive` response header, or a `<meta name="x-no-archive">` /
`<meta http-equiv="X-No-Archive">` tag, whatever its value except `no`, `0` or `false`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

HEAD_BYTES = 64 * 1024
"""How much of an HTML document is searched for the meta tag."""
NO_ARCHIVE_META = re.compile(
    rb"<meta\b[^>]{0,512}?\b(?:name|http-equiv)\s*=\s*[\"']?x-no-archive\b[^>]{0,512}>",
    re.IGNORECASE,
)
CONTENT_ATTR = re.compile(rb"\bcontent\s*=\s*[\"']?\s*([a-z0-9]*)", re.IGNORECASE)
OPT_IN = ("no", "0", "false")
"""X-No-Archive values that mean the page may be archived after all."""


def declined_by_headers(headers: Iterable[Sequence[str]]) -> str | None:
    """Why the response headers ([name, value] pairs) opt out of archiving, or None."""
    for name, value in headers:
        if name.lower() == "x-no-archive" and value.strip().lower() not in OPT_IN:
            return f"X-No-Archive: {value.strip()[:40]}"
    return None


def declined_by_html(html: bytes) -> str | None:
    """Why an HTML document (its first HEAD_BYTES are searched) opts out, or None."""
    for tag in NO_ARCHIVE_META.finditer(html[:HEAD_BYTES]):
        content = CONTENT_ATTR.search(tag.group(0))
        if content is None or content.group(1).decode().lower() not in OPT_IN:
            return '<meta name="x-no-archive">'
    return None


def declined_by_answer(
    headers: Iterable[Sequence[str]], body: bytes, content_type: str
) -> str | None:
    """Why an HTTP answer opts out: its headers, else, for an HTML body, its meta tag (a JSON
    or video body is not searched: a comment quoting the tag is no opt-out)."""
    why = declined_by_headers(headers)
    if why is None and "html" in content_type.lower():
        why = declined_by_html(body)
    return why
