"""Plain text of (sanitized) article HTML: what goes into the search index and the `text`
artifact (web-article seed §13).

Rules: every block element (paragraph, heading, list item, table row, quote, pre, div...)
starts and ends a block; blocks are separated by one blank line; `<br>` is a line break
inside its block; inside a block every run of whitespace (including non-breaking and
zero-width spaces) becomes one space, and lines are trimmed; a table row is one block with
its cells separated by a space. Text of `script`, `style`, `template`,
`noscript`, `head` and comments is excluded; image alt text is not text. `pre` keeps its
line breaks. The result is NFC-normalised and has no leading or trailing blank lines.
"""

from __future__ import annotations

import re
import unicodedata

import lxml.html

from shared.content.sanitize import parse_fragment

BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "dd", "details",
        "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2",
        "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre",
        "section", "summary", "table", "tbody", "tfoot", "thead", "tr", "ul",
        "html",
    }
)  # fmt: skip
EXCLUDED = frozenset({"script", "style", "template", "noscript", "head", "title", "svg", "math"})
SPACES = re.compile(r"[\s\u00a0\u200b\u200c\u200d\u2060\ufeff]+")
BREAK = "\x00"


class _Collector:
    """Accumulates text; `block()` closes the current block."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.current: list[str] = []

    def add(self, text: str | None) -> None:
        if text:
            self.current.append(text)

    def block(self) -> None:
        if self.current:
            self.blocks.append("".join(self.current))
            self.current = []


def _walk(el: lxml.html.HtmlElement, out: _Collector, in_pre: bool) -> None:
    tag = el.tag.lower() if isinstance(el.tag, str) else ""
    if not tag or tag in EXCLUDED:  # comments, processing instructions, excluded elements
        out.add(el.tail)
        return
    is_block = tag in BLOCKS
    if is_block:
        out.block()
    pre = in_pre or tag == "pre"
    if tag == "br":
        out.add(BREAK)
    elif tag in ("td", "th"):
        out.add(" ")
    text = el.text
    out.add(text.replace("\n", BREAK) if pre and text else text)
    for child in el:
        _walk(child, out, pre)
    if is_block:
        out.block()
    tail = el.tail
    out.add(tail.replace("\n", BREAK) if in_pre and tail else tail)


def _normalise_block(block: str) -> str:
    lines = (SPACES.sub(" ", line).strip() for line in block.split(BREAK))
    return "\n".join(line for line in lines if line)


def plain_text(html: str) -> str:
    """The plain text of an HTML fragment or document (rules in the module docstring)."""
    root = parse_fragment(html)
    out = _Collector()
    _walk(root, out, in_pre=False)
    out.block()
    blocks = (_normalise_block(unicodedata.normalize("NFC", b)) for b in out.blocks)
    return "\n\n".join(b for b in blocks if b)
