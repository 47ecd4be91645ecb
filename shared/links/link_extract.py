"""Quote-aware link extraction from Discourse cooked HTML, with a plain-text fallback.

HTML (``extract_links``), parsed with selectolax's Lexbor backend:

- every ``<a href>`` is a candidate; the href is resolved against the post URL;
  only ``http``/``https`` results are kept (``javascript:``, ``data:``, ``mailto:``,
  ``tel:`` ... are ignored). An href that is a bare domain (``www.example.com/x``) is
  taken as ``http://www.example.com/x`` rather than resolved into the forum;
- a link is a *quote link* when it sits inside ``<blockquote>`` or a Discourse quote
  container (``aside.quote``);
- a link preview (``aside.onebox``, ``div.*-onebox``, ``.lazy-video-container``) yields
  one occurrence for the URL it previews (``data-onebox-src`` or its first link); the
  preview's other links are part of the preview, not occurrences;
- not targets: ``a.mention`` / ``a.mention-group``, hashtags (``a.hashtag``,
  ``a.hashtag-cooked``), heading anchors (``a.anchor``), category badges, lightbox
  thumbnails (``a.lightbox``, anything in ``.lightbox-wrapper``), and every link to the
  forum itself (the post URL's host and ``forum_hosts``: topics, users, uploads) or to
  Discourse's CDN (``*.discourse-cdn.com``);
- one ``ExtractedLink`` per (url, in_quote), in document order;
- ``context``: up to ``CONTEXT_CHARS`` characters of the text around the link (the
  text of its nearest block element, centred on the link text; a preview's own text).

Plain text (``extract_links_text``): ``http(s)://`` and ``www.`` URLs; a URL is in a quote
when inside ``[quote]...[/quote]`` (nesting and ``[quote="user, post:1"]`` supported; an
unclosed quote runs to the end) or on a line starting with ``>``. Trailing punctuation
and unbalanced closing brackets are not part of a URL.

Neither function raises: the worst input gives an empty list.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from selectolax.lexbor import LexborHTMLParser, LexborNode

from shared.links.urlparts import SCHEME_PREFIXES

CONTEXT_CHARS = 200

_SKIP_CLASSES = frozenset(
    {
        "mention",
        "mention-group",
        "hashtag",
        "hashtag-cooked",
        "hashtag-raw",
        "lightbox",
        "anchor",
        "badge-category__wrapper",
        "badge-wrapper",
    }
)
_PREVIEW_CLASSES = frozenset({"onebox", "lazy-video-container", "lazyYT", "video-onebox"})
_BLOCK_TAGS = frozenset(
    {
        "p",
        "li",
        "td",
        "th",
        "dd",
        "dt",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "blockquote",
        "div",
        "aside",
        "pre",
        "figcaption",
        "summary",
        "details",
        "body",
    }
)
_WS = re.compile(r"\s+")
_BARE_DOMAIN = re.compile(r"www\.[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?:[/?#:]|$)", re.IGNORECASE)
_HAS_TAG = re.compile(r"<[A-Za-z!/?]")
_STRIP = "".join(chr(i) for i in range(0x21))


@dataclass(frozen=True, slots=True)
class ExtractedLink:
    """One link of a post: absolute URL, whether it is quoted, and text around it."""

    url: str
    in_quote: bool
    context: str


def has_markup(text: str) -> bool:
    """True when ``text`` contains HTML tags (otherwise use the plain-text rules)."""
    return _HAS_TAG.search(text) is not None


def _host_of(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").rstrip(".")
    except ValueError:
        return ""


class _OwnHosts:
    """The forum's own hosts: links there are not archive targets."""

    def __init__(self, base_url: str, forum_hosts: Iterable[str]) -> None:
        self.hosts = {h.strip().lower().rstrip(".") for h in forum_hosts if h and h.strip()}
        base = _host_of(base_url)
        if base:
            self.hosts.add(base)

    def __contains__(self, host: str) -> bool:
        return host in self.hosts or host.endswith(".discourse-cdn.com")


def _resolve(href: str, base_url: str) -> str | None:
    """Absolute http(s) URL of an href, or None when it is not a web link."""
    href = href.strip(_STRIP)
    if "\t" in href or "\n" in href or "\r" in href:
        href = href.replace("\t", "").replace("\n", "").replace("\r", "")
    if not href:
        return None
    low = href[:8].lower()
    if low.startswith(SCHEME_PREFIXES):
        return href
    if _BARE_DOMAIN.match(href):
        return "http://" + href
    try:
        url = urljoin(base_url, href)
    except ValueError:
        return None
    return url if url[:8].lower().startswith(SCHEME_PREFIXES) else None


def _snippet(text: str, needle: str, start: int) -> tuple[str, int]:
    """A window of ``text`` around ``needle`` searched from ``start``; and the next start."""
    if len(text) <= CONTEXT_CHARS:
        pos = text.find(needle, start) if needle else -1
        return text, (pos + len(needle) if pos >= 0 else start)
    pos = text.find(needle, start) if needle else -1
    if pos < 0:
        pos = text.find(needle) if needle else -1
    if pos < 0:
        return text[:CONTEXT_CHARS].rstrip() + "…", start
    span = min(len(needle), CONTEXT_CHARS)
    lead = (CONTEXT_CHARS - span) // 2
    lo = max(0, pos - lead)
    hi = min(len(text), lo + CONTEXT_CHARS)
    lo = max(0, hi - CONTEXT_CHARS)
    out = text[lo:hi].strip()
    if lo > 0:
        out = "…" + out
    if hi < len(text):
        out += "…"
    return out, pos + len(needle)


def _classes(node: LexborNode) -> list[str]:
    value = node.attributes.get("class")
    return value.split() if value else []


class _Extractor:
    def __init__(self, base_url: str, own: _OwnHosts) -> None:
        self.base_url = base_url
        self.own = own
        self.seen: set[tuple[str, bool]] = set()
        self.out: list[ExtractedLink] = []
        self.block_text: dict[int, str] = {}
        self.block_cursor: dict[int, int] = {}
        self.previews_done: set[int] = set()

    def text_of(self, node: LexborNode) -> str:
        key = node.mem_id
        text = self.block_text.get(key)
        if text is None:
            text = _WS.sub(" ", node.text(deep=True, separator="")).strip()
            self.block_text[key] = text
        return text

    def add(self, url: str, in_quote: bool, context: str) -> None:
        if _host_of(url).lower() in self.own:
            return
        key = (url, in_quote)
        if key in self.seen:
            return
        self.seen.add(key)
        self.out.append(ExtractedLink(url, in_quote, context))

    def anchor(self, a: LexborNode) -> None:
        attrs = a.attributes
        href = attrs.get("href")
        if not href:
            return
        cls = attrs.get("class")
        if cls and not _SKIP_CLASSES.isdisjoint(cls.split()):
            return
        in_quote = False
        preview: LexborNode | None = None
        block: LexborNode | None = None
        node = a.parent
        while node is not None:
            tag = node.tag
            if tag == "blockquote":
                in_quote = True
            elif tag in ("aside", "div"):
                classes = _classes(node)
                if classes:
                    if "lightbox-wrapper" in classes:
                        return
                    if tag == "aside" and "quote" in classes:
                        in_quote = True
                    if preview is None and (
                        not _PREVIEW_CLASSES.isdisjoint(classes)
                        or any(c.endswith("-onebox") for c in classes)
                    ):
                        preview = node
            if block is None and tag in _BLOCK_TAGS:
                block = node
            if tag in ("body", "html"):
                break
            node = node.parent
        if preview is not None:
            self.preview(preview, href, in_quote)
            return
        url = _resolve(href, self.base_url)
        if url is None:
            return
        context = ""
        if block is not None:
            key = block.mem_id
            label = _WS.sub(" ", a.text(deep=True, separator="")).strip()
            context, self.block_cursor[key] = _snippet(
                self.text_of(block), label, self.block_cursor.get(key, 0)
            )
        self.add(url, in_quote, context)

    def preview(self, box: LexborNode, first_href: str, in_quote: bool) -> None:
        key = box.mem_id
        if key in self.previews_done:
            return
        self.previews_done.add(key)
        source = box.attributes.get("data-onebox-src") or first_href
        url = _resolve(source, self.base_url)
        if url is None and source is not first_href:
            url = _resolve(first_href, self.base_url)
        if url is None:
            return
        text = self.text_of(box) or _WS.sub(" ", box.attributes.get("data-video-title") or "")
        if len(text) > CONTEXT_CHARS:
            text = text[:CONTEXT_CHARS].rstrip() + "…"
        self.add(url, in_quote, text)


def extract_links(
    html: str, base_url: str, *, forum_hosts: Iterable[str] = ()
) -> list[ExtractedLink]:
    """Links of a post's cooked HTML, in document order; see the module docstring."""
    if not isinstance(html, str) or not html:
        return []
    try:
        ex = _Extractor(
            base_url if isinstance(base_url, str) else "", _OwnHosts(base_url, forum_hosts)
        )
        tree = LexborHTMLParser(html)
        for a in tree.css("a"):
            try:
                ex.anchor(a)
            except Exception:  # one odd anchor must not cost the others
                continue
        return ex.out
    except Exception:
        return []


# --- plain text / BBCode -----------------------------------------------------------------

_TEXT_URL = re.compile(r"(?:https?://|www\.)[^\s<>\"'\[\]{}|\\^`]+", re.IGNORECASE)
_QUOTE_TAG = re.compile(r"\[(/?)quote(?:=[^\]]*)?\]", re.IGNORECASE)
_MD_QUOTE_LINE = re.compile(r"^[ \t]*>.*$", re.MULTILINE)
_TRAILING = ".,;:!?'\"*_~"
_PAIRS = {")": "(", "]": "[", "}": "{"}


def _quote_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    depth = 0
    start = 0
    for m in _QUOTE_TAG.finditer(text):
        if m.group(1):
            if depth:
                depth -= 1
                if depth == 0:
                    spans.append((start, m.start()))
        else:
            if depth == 0:
                start = m.end()
            depth += 1
    if depth:
        spans.append((start, len(text)))
    spans.extend((m.start(), m.end()) for m in _MD_QUOTE_LINE.finditer(text))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def _inside(spans: list[tuple[int, int]], starts: list[int], pos: int) -> bool:
    i = bisect_right(starts, pos) - 1
    return i >= 0 and pos < spans[i][1]


def _trim(url: str) -> str:
    while url:
        last = url[-1]
        unbalanced = last in _PAIRS and url.count(last) > url.count(_PAIRS[last])
        if last in _TRAILING or unbalanced:
            url = url[:-1]
        else:
            break
    return url


def extract_links_text(
    text: str, base_url: str, *, forum_hosts: Iterable[str] = ()
) -> list[ExtractedLink]:
    """Links of a plain-text / BBCode post, in order; see the module docstring."""
    if not isinstance(text, str) or not text:
        return []
    try:
        own = _OwnHosts(base_url if isinstance(base_url, str) else "", forum_hosts)
        spans = _quote_spans(text)
        starts = [lo for lo, _ in spans]
        seen: set[tuple[str, bool]] = set()
        out: list[ExtractedLink] = []
        for m in _TEXT_URL.finditer(text):
            raw = _trim(m.group())
            if len(raw) < 8 or raw.lower() in SCHEME_PREFIXES:
                continue
            url = raw if raw[:4].lower() == "http" else "http://" + raw
            if _host_of(url).lower() in own:
                continue
            pos = m.start()
            in_quote = _inside(spans, starts, pos)
            key = (url, in_quote)
            if key in seen:
                continue
            seen.add(key)
            half = (CONTEXT_CHARS - min(len(raw), CONTEXT_CHARS)) // 2
            lo, hi = max(0, pos - half), min(len(text), pos + len(raw) + half)
            context = _WS.sub(" ", _QUOTE_TAG.sub(" ", text[lo:hi])).strip()[:CONTEXT_CHARS]
            out.append(ExtractedLink(url, in_quote, context))
        return out
    except Exception:
        return []
