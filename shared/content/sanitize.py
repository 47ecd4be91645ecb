"""Sanitized article HTML, safe to show: the rules of the web-article seed (§12).

Order: parse into a DOM (lxml), resolve every `href`/`src`/`poster`/`cite` against the
page's final URL, then let nh3 (Rust ammonia) apply an allowlist of tags and attributes.
`style`, `class`, `id` and every `on*` handler are dropped because no allowlist entry keeps
them; `script`, `style`, `iframe`, `svg`, `math`, `form`, `object`, `embed`, `template`,
`noscript`, `button`, `input`, `select`, `textarea` are removed with their content. Links
get `rel="noopener noreferrer" target="_blank" referrerpolicy="no-referrer"`. Only http(s)
and mailto URLs survive (no `javascript:`, no `data:`).
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

import lxml.html
import nh3
from lxml import etree

DROPPED_WITH_CONTENT = frozenset(
    {
        "script",
        "style",
        "iframe",
        "frame",
        "frameset",
        "svg",
        "math",
        "form",
        "object",
        "embed",
        "template",
        "noscript",
        "button",
        "input",
        "select",
        "textarea",
        "canvas",
        "audio",
        "video",
        "link",
        "meta",
        "title",
        "head",
    }
)
TAGS = frozenset(
    {
        "a", "abbr", "article", "aside", "b", "bdi", "bdo", "blockquote", "br", "caption",
        "cite", "code", "col", "colgroup", "dd", "del", "details", "dfn", "div", "dl", "dt",
        "em", "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header",
        "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp",
        "section", "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td",
        "tfoot", "th", "thead", "time", "tr", "u", "ul", "var", "wbr",
    }
)  # fmt: skip
ATTRIBUTES: dict[str, set[str]] = {
    "a": {"href", "hreflang", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "blockquote": {"cite"},
    "q": {"cite"},
    "del": {"cite", "datetime"},
    "ins": {"cite", "datetime"},
    "time": {"datetime"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan", "scope"},
    "ol": {"start", "reversed"},
    "abbr": {"title"},
    "*": {"lang", "dir"},
}
LINK_ATTRIBUTES = {"a": {"target": "_blank", "referrerpolicy": "no-referrer"}}
URL_SCHEMES = {"http", "https", "mailto"}
URL_ATTRIBUTES = ("href", "src", "cite", "poster")
XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*>")  # lxml refuses str input that declares one


def _absolute(base_url: str, value: str) -> str:
    value = value.strip()
    try:
        return urljoin(base_url, value)
    except ValueError:
        return ""


def resolve_urls(root: lxml.html.HtmlElement, base_url: str) -> None:
    """Make every URL attribute absolute against `base_url` (a `<base href>` is ignored: the
    final URL is what the reader fetched). Lazy images (`data-src`) get their real source."""
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        if el.tag == "img" and not el.get("src", "").strip():
            lazy = el.get("data-src") or el.get("data-original") or el.get("data-lazy-src")
            if lazy:
                el.set("src", lazy)
        for attr in URL_ATTRIBUTES:
            value = el.get(attr)
            if value is not None:
                el.set(attr, _absolute(base_url, value))


def _drop_dangerous(root: lxml.html.HtmlElement) -> None:
    for el in list(root.iter()):
        if not isinstance(el.tag, str):  # comments, processing instructions
            if el.getparent() is not None:
                el.drop_tree()
            continue
        tag = el.tag.rsplit("}", 1)[-1].lower()  # svg parsed with a namespace
        if tag in DROPPED_WITH_CONTENT and el.getparent() is not None:
            el.drop_tree()


def parse_fragment(html: str) -> lxml.html.HtmlElement:
    """An HTML fragment (or document) as one element; an empty input gives an empty div."""
    html = XML_DECLARATION.sub("", html, count=1)
    if not html.strip():
        return lxml.html.fromstring("<div></div>")
    try:
        return lxml.html.fragment_fromstring(html, create_parent="div")
    except (etree.ParserError, ValueError):
        return lxml.html.fromstring("<div></div>")


def sanitize_html(html: str, base_url: str) -> str:
    """Safe HTML for the reader view (see the module docstring for the rules)."""
    root = parse_fragment(html)
    _drop_dangerous(root)
    resolve_urls(root, base_url)
    serialized = (root.text or "") + "".join(
        lxml.html.tostring(child, encoding="unicode", method="html") for child in root
    )
    cleaned: str = nh3.clean(
        serialized,
        tags=set(TAGS),
        clean_content_tags=set(DROPPED_WITH_CONTENT - {"head", "title", "meta", "link"}),
        attributes=ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer",
        set_tag_attribute_values=LINK_ATTRIBUTES,
        strip_comments=True,
    )
    return cleaned.strip()
