"""Which origins a page's document will load from, read from the document as it passes
through the egress proxy, so the proxy can connect to them before the browser asks.

Why: Chromium holds a page's images (and other low-priority requests) until the
render-blocking scripts and style sheets of its head have loaded or failed. When a head
resource's host never answers, that costs the page the subresource bound once; then the
images start, and when their host never answers either, it costs the bound a second time
(a real page of the readability corpus: 6.1 s with a 3 s bound). The proxy reads the
document's subresource references (`subresource_origins`) and connects to each origin at
once (EgressProxy), within the same bound: an origin that never answers is then known as
unresponsive (EgressPolicy) by the time the browser asks, and its requests are answered at
once; one that does answer hands the browser its connection, so warming costs no extra
connection. Only what a page loads without being asked counts: scripts, style sheets,
preloads, icons, images not marked lazy, frames, media; never links (`<a href>`). Then the
hosts its inline scripts spell out (`'//stats.example/tag.js'`): an analytics or ad tag
inserts its script from there once the head's scripts have run, which is again after the
bound when those never came.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from urllib.parse import urljoin, urlsplit

from selectolax.lexbor import LexborHTMLParser

from shared.fetching.decoding import BoundedDecoder, CorruptEncoding, UnsupportedEncoding
from shared.links.urlparts import DEFAULT_PORTS, SUPPORTED_SCHEMES

SCAN_BYTES = 512 * 1024
"""How much of the decoded document is read for its references."""

LINK_RELS = frozenset(
    {"stylesheet", "preload", "modulepreload", "icon", "shortcut", "apple-touch-icon",
     "preconnect", "manifest"}
)  # fmt: skip
"""`<link rel>` values whose href the browser loads (or, for preconnect, connects to)."""

EAGER = "script[src], link[href], img, iframe[src], source, video, audio, embed[src], input[src]"

SCRIPT_URL = re.compile(
    r"""(?<![\w.-])(https?:)?(?://|\\/\\/)([a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+)(:\d{1,5})?(?=[/"'?\\])""",
    re.IGNORECASE,
)
r"""A URL's scheme (optional), host and port written in script text, slashes escaped or not
(`"https:\/\/cdn.example\/a.js"` in JSON)."""
JS_TYPES = frozenset({"", "text/javascript", "application/javascript", "module"})

Origin = tuple[str, str, int]
"""(scheme, host, port) of a URL, host in lower case."""


class DocumentTap:
    """The first SCAN_BYTES of a document's body as the page gets it, decoded by the bounded
    decoder (shared.fetching.decoding: gzip, deflate, br, zstd). A coding it does not know, or
    a body that is not what its coding says, leaves nothing to read: the page is then not
    warmed."""

    def __init__(self, coding: bytes) -> None:
        try:
            self._decoder: BoundedDecoder | None = BoundedDecoder(coding.decode("latin-1"))
        except UnsupportedEncoding:
            self._decoder = None
        self._parts: list[bytes] = []
        self._size = 0

    def feed(self, piece: bytes) -> None:
        if self._decoder is None or self._size >= SCAN_BYTES:
            return
        try:
            for data in self._decoder.feed(piece):
                data = data[: SCAN_BYTES - self._size]
                self._parts.append(data)
                self._size += len(data)
                if self._size >= SCAN_BYTES:
                    return
        except CorruptEncoding:
            self._decoder = None

    @property
    def body(self) -> bytes:
        return b"".join(self._parts) if self._decoder is not None else b""


def origin(url: str, base: str = "") -> Origin | None:
    """The origin of url (against base), or None for a URL that is not http(s) with a
    host, or not a URL at all."""
    try:
        parts = urlsplit(urljoin(base, url) if base else url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in SUPPORTED_SCHEMES or not parts.hostname:
        return None
    return parts.scheme, parts.hostname.lower(), port or DEFAULT_PORTS[parts.scheme]


def subresource_origins(html: bytes, base_url: str, limit: int) -> list[Origin]:
    """The origins of the subresources html loads without being asked, in document order,
    at most limit, the document's own origin left out."""
    if not html or limit <= 0:
        return []
    own = origin(base_url)
    found: list[Origin] = []
    for o in _referenced(LexborHTMLParser(html), base_url, own[0] if own else "https"):
        if o is not None and o != own and o not in found:
            found.append(o)
            if len(found) >= limit:
                break
    return found


def _referenced(tree: LexborHTMLParser, base_url: str, scheme: str) -> Iterator[Origin | None]:
    """The origin of each eager reference of the document, then of each host its inline
    scripts spell out (a scheme-relative one taken as `scheme`), None for what is no URL."""
    base = tree.css_first("base[href]")
    if base is not None:
        with contextlib.suppress(ValueError):  # a base that is no URL is ignored
            base_url = urljoin(base_url, str(base.attributes.get("href") or ""))
    for node in tree.css(EAGER):
        attrs = node.attributes
        if node.tag == "link":
            rels = set(str(attrs.get("rel") or "").lower().split())
            if not rels & LINK_RELS:
                continue
            refs = [attrs.get("href")]
        elif str(attrs.get("loading") or "").lower() == "lazy":
            continue
        else:
            refs = [attrs.get("src"), attrs.get("poster")]
            refs += [c.split()[0] for c in str(attrs.get("srcset") or "").split(",") if c.split()]
        yield from (origin(str(ref).strip(), base_url) for ref in refs if ref)
    for node in tree.css("script:not([src])"):
        if str(node.attributes.get("type") or "").strip().lower() not in JS_TYPES:
            continue
        for m in SCRIPT_URL.finditer(node.text(deep=False) or ""):
            yield origin(f"{(m.group(1) or scheme + ':').lower()}//{m.group(2)}{m.group(3) or ''}/")
