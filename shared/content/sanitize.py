"""Sanitized article HTML, safe to show: the rules of the web-article seed (§12). The one
sanitiser of the reader view: the web shows its output as it is.

Order: parse into a DOM (lxml), resolve every `href`/`src`/`poster`/`cite` against the
page's final URL (a lazy image gets its real source), point every image at the capture's own
copy of it and drop an image that has none (the reader view never loads anything from the
archived site: `image_sources` lists what to copy), then let nh3 (Rust ammonia) apply an
allowlist of tags and attributes.
`style`, `class`, `id` and every `on*` handler are dropped because no allowlist entry keeps
them; `script`, `style`, `iframe`, `svg`, `math`, `form`, `object`, `embed`, `template`,
`noscript`, `button`, `input`, `select`, `textarea` are removed with their content. Links
get `rel="noopener noreferrer nofollow ugc" target="_blank" referrerpolicy="no-referrer"`.
Only http(s) and mailto URLs survive (no `javascript:`, no `data:`), and the relative paths
of the image copies (`images/1.png`, beside `article.html` in the snapshot).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urljoin

import lxml.html
import nh3
from lxml import etree

from shared.links.urlparts import supported_scheme

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
LINK_REL = "noopener noreferrer nofollow ugc"
ImageCopies = Mapping[str, str]
"""An image's absolute source -> where the capture keeps its copy, relative to the article
(`images/1.png`)."""


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


def _prepared(html: str, base_url: str) -> lxml.html.HtmlElement:
    root = parse_fragment(html)
    _drop_dangerous(root)
    resolve_urls(root, base_url)
    return root


def image_sources(html: str, base_url: str) -> list[str]:
    """The absolute http(s) sources of the article's images (lazy ones resolved), in order,
    each once: what a capture copies so that `sanitize_html` can show them."""
    seen: dict[str, None] = {}
    for el in _prepared(html, base_url).iter("img"):
        src = el.get("src", "")
        if supported_scheme(src):
            seen.setdefault(src, None)
    return list(seen)


def _use_copies(root: lxml.html.HtmlElement, images: ImageCopies) -> None:
    """Every image shows the capture's copy of its source; one without a copy is dropped
    (its tail text stays)."""
    for el in list(root.iter("img")):
        copy = images.get(el.get("src", ""))
        if copy is not None:
            el.set("src", copy)
        elif el.getparent() is not None:
            el.drop_tree()


def sanitize_html(html: str, base_url: str, images: ImageCopies | None = None) -> str:
    """Safe HTML for the reader view (see the module docstring for the rules); `images` maps
    each image source to its copy (none given: no image is kept)."""
    root = _prepared(html, base_url)
    _use_copies(root, images or {})
    serialized = (root.text or "") + "".join(
        lxml.html.tostring(child, encoding="unicode", method="html") for child in root
    )
    cleaned: str = nh3.clean(
        serialized,
        tags=set(TAGS),
        clean_content_tags=set(DROPPED_WITH_CONTENT - {"head", "title", "meta", "link"}),
        attributes=ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel=LINK_REL,
        set_tag_attribute_values=LINK_ATTRIBUTES,
        strip_comments=True,
    )
    return cleaned.strip()
