"""Page metadata from HTML: meta tags (OpenGraph, Twitter card, Dublin Core, article:*),
JSON-LD, microdata, `<title>`, `<html lang>`, `<link rel=canonical|icon>`; and the merge of
the raw and the rendered page's metadata.

Precedence per field (first non-empty wins; meta names are case-insensitive and a
space-separated `property` names several):
- title: Dublin Core title, JSON-LD headline (unless it shares < 2 words with `<title>`;
  sites update the JSON-LD headline when og:title goes stale), JSON-LD name, og:title,
  twitter:title, parsely-title, `<title>`, first `<h1>`; a platform's wrapper
  text is removed and posts on X / TikTok read "Name (@handle) on X" (shared.content.platforms)
- description: Dublin Core, og:description, description, twitter:description, JSON-LD
- author: a platform's og:title author, Dublin Core creator, JSON-LD author names, author /
  article:author / parsely-author / sailthru.author meta, trafilatura's author finder, byline
  markup (rel=author, itemprop=author, .byline, .author). Twitter handles are not names. URLs
  (also as words: "Www Facebook Com"), "By"/"View all posts by" prefixes and names equal to
  the site's name are not authors.
- published_at: trafilatura's date finder (htmldate: original publication date) unless a
  meta/JSON-LD/markup date says the same day with a time (then that, more precise); else
  article:published_time and kin, JSON-LD datePublished, itemprop=datePublished, `<time>`
- site_name: og:site_name, JSON-LD publisher name, application-name, twitter:site
- language: <html lang>, content-language meta, og:locale, JSON-LD inLanguage
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import asdict, dataclass, fields, replace
from typing import Any
from urllib.parse import urljoin

import lxml.html
from lxml import etree

from shared.content import jsonld, platforms
from shared.content.sanitize import XML_DECLARATION
from shared.links.urlparts import supported_scheme

DC_TITLE = ("dc:title", "dcterm:title", "dcterms:title", "dc.title", "dcterms.title")
TITLE_KEYS = ("twitter:title", "parsely-title", "sailthru.title")
DESCRIPTION_KEYS = (
    "dc:description",
    "dcterm:description",
    "dc.description",
    "og:description",
    "description",
    "twitter:description",
)
DC_AUTHOR = ("dc:creator", "dcterm:creator", "dcterms:creator", "dc.creator", "dcterms.creator")
AUTHOR_KEYS = (
    "author",
    "article:author",
    "og:article:author",
    "parsely-author",
    "sailthru.author",
    "byl",
    "citation_author",
    "book:author",
)
DATE_KEYS = (
    "article:published_time",
    "og:article:published_time",
    "og:published_time",
    "published_time",
    "datepublished",
    "parsely-pub-date",
    "sailthru.date",
    "dc.date.issued",
    "dc:date",
    "dc.date",
    "dcterms.created",
    "date",
    "pubdate",
    "publishdate",
    "publish-date",
    "citation_publication_date",
    "article.published",
)
SITE_KEYS = ("og:site_name", "application-name", "twitter:site")
BYLINE_XPATH = (
    "//*[@rel='author']",
    "//*[@itemprop='author']//*[@itemprop='name']",
    "//*[@itemprop='author']",
    "//*[contains(concat(' ', normalize-space(@class), ' '), ' byline__name ')]",
    "//*[contains(concat(' ', normalize-space(@class), ' '), ' author-name ')]",
    "//*[contains(concat(' ', normalize-space(@class), ' '), ' byline ')]",
    "//*[contains(concat(' ', normalize-space(@class), ' '), ' author ')]",
)
BY_PREFIX = re.compile(
    r"^\s*(view all posts by|posted by|written by|by|von|par|por|door|di)\s*[:\s]\s*", re.I
)
NOT_AUTHORS = frozenset(
    {"no author", "admin", "administrator", "unknown", "staff", "posted", "username", "author"}
)


@dataclass(frozen=True)
class PageMetadata:
    """What a page says about itself; every field may be missing."""

    title: str | None = None
    description: str | None = None
    author: str | None = None
    published_at: str | None = None
    site_name: str | None = None
    language: str | None = None
    canonical_url: str | None = None
    favicon: str | None = None
    image: str | None = None

    def as_dict(self) -> dict[str, str]:
        """The fields that are set."""
        return {k: v for k, v in asdict(self).items() if v}


def _clean(value: str | None) -> str | None:
    if value is None:
        return None
    value = " ".join(value.split())
    return value or None


def _meta(root: lxml.html.HtmlElement) -> dict[str, str]:
    found: dict[str, str] = {}
    for node in root.iter("meta"):
        keys = node.get("property") or node.get("name") or node.get("itemprop") or ""
        content = _clean(node.get("content"))
        for key in keys.lower().split():
            if content:
                found.setdefault(key, content)
        equiv = (node.get("http-equiv") or "").strip().lower()
        if equiv == "content-language" and content:
            found.setdefault("content-language", content)
    return found


def _first(meta: dict[str, str], keys: tuple[str, ...]) -> str | None:
    return next((meta[k] for k in keys if k in meta), None)


URL_WORDS = re.compile(r"^www\s", re.I)
"""A URL turned into words ("Www Facebook Com, Someone": trafilatura's author finder on an
author meta tag that holds a profile URL). A name followed by its homepage is a name."""


def _is_url(value: str) -> bool:
    return bool(
        re.match(r"^((https?:)?//|www\.|/)|^[\w-]+(\.[\w-]+)+/", value) or URL_WORDS.search(value)
    )


def _node_text(node: lxml.html.HtmlElement) -> str | None:
    return _clean(node.text_content())


def _byline(root: lxml.html.HtmlElement) -> str | None:
    for xpath in BYLINE_XPATH:
        for node in root.xpath(xpath):
            value = _clean(node.get("content")) or _node_text(node)
            if value and len(value) <= 100:
                return value
    return None


def _date_markup(root: lxml.html.HtmlElement) -> str | None:
    for node in root.xpath("//*[@itemprop='datePublished']"):
        value = _clean(node.get("content") or node.get("datetime") or node.text_content())
        if value:
            return value
    for node in root.xpath("//time[@pubdate]|//article//time[@datetime]|//time[@datetime]"):
        value = _clean(node.get("datetime"))
        if value:
            return value
    return None


def _link(root: lxml.html.HtmlElement, rels: tuple[str, ...], base: str) -> str | None:
    for rel in rels:
        for node in root.iter("link"):
            href = str(node.get("href") or "").strip()
            if rel in str(node.get("rel") or "").lower().split() and href:
                return urljoin(base, href)
    return None


def _jsonld_blocks(root: lxml.html.HtmlElement) -> list[str]:
    return [
        node.text or ""
        for node in root.iter("script")
        if "ld+json" in (node.get("type") or "").lower()
    ]


def _trafilatura(html: str, url: str | None) -> tuple[str | None, str | None]:
    """(author, date) from trafilatura's metadata finders (date: htmldate)."""
    from trafilatura.metadata import extract_metadata as trafilatura_metadata

    try:
        found = trafilatura_metadata(html, default_url=url)
    except Exception:  # trafilatura raises on degenerate documents
        return None, None
    author: str | None = getattr(found, "author", None)
    date: str | None = getattr(found, "date", None)
    return (author.replace("; ", ", ") if author else None), date


def warm() -> None:
    """Fill trafilatura's lazy caches so hooks forked from a pre-warmed host find them ready:
    the public-suffix list that courlan's `tld` parses on its first URL without a plain
    domain name (~50-90 ms), then one metadata run."""
    with contextlib.suppress(ImportError):
        from tld import get_tld  # trafilatura's dependency (through courlan)

        get_tld("http://example.com/", fail_silently=True)
    _trafilatura("<html><head><title>w</title></head><body><p>w</p></body></html>", None)


def _author(candidates: list[str | None], site_names: set[str]) -> str | None:
    """The first candidate that is a name: no URL, no prefix, not the site's own name."""
    for value in candidates:
        value = _clean(BY_PREFIX.sub("", value)) if value else None
        if not value or _is_url(value) or value.casefold() in NOT_AUTHORS:
            continue
        if value.casefold() in site_names:
            continue
        for site in site_names:  # "Site - Jane Doe"
            if site and value.casefold().startswith(site + " - "):
                value = value[len(site) + 3 :]
        return value
    return None


def _title(meta: dict[str, str], ld: dict[str, Any], page_title: str | None) -> str | None:
    headline = _clean(jsonld.text(ld.get("headline")))
    name = _clean(jsonld.text(ld.get("name")))
    if headline and page_title:
        # some sites put a category ("Wikimedia list article") in the headline: keep it only
        # when it shares two words (one, if it has one) with <title>
        words = headline.casefold().split()
        if sum(w in page_title.casefold().split() for w in words) < min(2, len(words)):
            headline = None
    return (
        _first(meta, DC_TITLE)
        or headline
        or name
        or meta.get("og:title")
        or _first(meta, TITLE_KEYS)
        or page_title
    )


def _web_url(base: str, value: str | None) -> str | None:
    """`value` made absolute against `base`, if it is an http(s) URL (never javascript:)."""
    if not value:
        return None
    try:
        absolute = urljoin(base, value.strip())
    except ValueError:
        return None
    return absolute if supported_scheme(absolute) else None


def _same_day(a: str, b: str) -> bool:
    return a[:10] == b[:10]


def parse_document(html: str) -> lxml.html.HtmlElement | None:
    """The page as an lxml document, or None when it is not parseable HTML."""
    html = XML_DECLARATION.sub("", html, count=1)
    if not html.strip():
        return None
    try:
        return lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return None


def extract_metadata(html: str, url: str, find_dates: bool = True) -> PageMetadata:
    """The page's metadata (precedence in the module docstring); `url` resolves links.
    `find_dates=False` skips trafilatura's finders (faster; meta tags only)."""
    root = parse_document(html)
    if root is None:
        return PageMetadata()
    meta = _meta(root)
    ld = jsonld.main_object(jsonld.parse_blocks(_jsonld_blocks(root)))
    title_node = root.find(".//title")
    h1 = root.find(".//h1")
    page_title = _node_text(title_node) if title_node is not None else None
    publisher = jsonld.names(ld.get("publisher"))
    site_name = (
        _first(meta, SITE_KEYS[:1])
        or (publisher[0] if publisher else None)
        or _first(meta, SITE_KEYS[1:])
    )
    site_names = {n.casefold() for n in (*publisher, site_name or "", meta.get("og:site_name", ""))}
    trafilatura_author, trafilatura_date = _trafilatura(html, url) if find_dates else (None, None)
    ld_authors = [n for n in jsonld.names(ld.get("author")) if not _is_url(n)]
    ld_authors = [n for n in ld_authors if n.casefold() not in site_names]
    author = _author(
        [
            platforms.author_from_title(url, meta.get("og:title")),
            _first(meta, DC_AUTHOR),
            ", ".join(ld_authors) if ld_authors else None,
            *(meta.get(k) for k in AUTHOR_KEYS),
            trafilatura_author,
            _byline(root),
        ],
        site_names,
    )
    marked = (
        _first(meta, DATE_KEYS)
        or jsonld.text(ld.get("datePublished"))
        or jsonld.text(ld.get("dateCreated"))
        or _date_markup(root)
    )
    published = marked
    if trafilatura_date and not (marked and _same_day(marked, trafilatura_date)):
        published = trafilatura_date
    html_lang = root.get("lang") or root.get("xml:lang")
    return PageMetadata(
        title=platforms.clean_title(
            url, _title(meta, ld, page_title) or (_node_text(h1) if h1 is not None else None)
        ),
        description=_first(meta, DESCRIPTION_KEYS) or _clean(jsonld.text(ld.get("description"))),
        author=author,
        published_at=published,
        site_name=site_name,
        language=_clean(html_lang)
        or meta.get("content-language")
        or meta.get("og:locale")
        or _clean(jsonld.text(ld.get("inLanguage"))),
        canonical_url=_web_url(url, _link(root, ("canonical",), url) or meta.get("og:url")),
        favicon=_web_url(url, _link(root, ("icon", "shortcut", "apple-touch-icon"), url))
        or _web_url(url, "/favicon.ico"),
        image=_web_url(url, meta.get("og:image") or meta.get("twitter:image")),
    )


WALL = re.compile(
    r"\b(log ?in|sign ?in|sign ?up|captcha|are you a robot|access denied|just a moment|"
    r"attention required|verify you are human|consent|cookies?|paywall|subscribe to (read|"
    r"continue)|over 18|are you 18|age verification|blocked)\b",
    re.I,
)


def looks_like_wall(meta: PageMetadata) -> bool:
    """True when a page's title says it is a login wall, bot check or interstitial."""
    return bool(meta.title and WALL.search(meta.title) and len(meta.title) < 80)


def merge(raw: PageMetadata, rendered: PageMetadata) -> PageMetadata:
    """One record from the raw and the rendered page: the rendered page wins (scripts build
    titles and JSON-LD), except when it is a wall/interstitial and the raw page is not; any
    field one side lacks comes from the other."""
    first, second = rendered, raw
    if looks_like_wall(rendered) and not looks_like_wall(raw):
        first, second = raw, rendered
    values: dict[str, Any] = {}
    for f in fields(PageMetadata):
        values[f.name] = getattr(first, f.name) or getattr(second, f.name)
        if first is rendered and raw_spelling(getattr(rendered, f.name), getattr(raw, f.name)):
            values[f.name] = getattr(raw, f.name)
    return replace(first, **values)


def raw_spelling(rendered: str | None, raw: str | None) -> bool:
    """True when the rendered text is the raw text's UTF-8 read as windows-1252: a page that
    declares no charset is decoded so by Chromium (browsers do not guess UTF-8 for the web),
    while the raw decoder falls back to UTF-8, so "Grüße" was shown as "GrÃ¼ÃŸe"."""
    if not rendered or not raw or rendered == raw or rendered.isascii():
        return False
    # Chromium maps windows-1252's five unassigned bytes to U+0081 and co, as latin-1 does
    data = bytearray()
    for char in rendered:
        try:
            data += char.encode("cp1252")
        except UnicodeEncodeError:
            if ord(char) > 0xFF:
                return False
            data.append(ord(char))
    try:
        return data.decode("utf-8") == raw
    except UnicodeDecodeError:
        return False
