"""The page as a reader sees it: the HTML minus the elements the page itself hides.

Removed before the extractors run: elements with the `hidden` attribute (except
`hidden="until-found"`, which find-in-page reveals), an inline style `display: none` or
`visibility: hidden`, and `aria-hidden="true"`. Readability.js and trafilatura's main pass
drop these too, but trafilatura's fallbacks, readability-lxml and jusText do not, so a
hidden second copy of the article (responsive layouts ship one per breakpoint), a collapsed
menu or a "related stories" drawer ended up in the article or swayed the vote.

An element holding more than half of the page's text is kept even when hidden: scripts
hide the whole page while a modal is open (`aria-hidden` on the app root) or until they
have run (anti-flicker `display: none`), and that text is still the page's content.
CSS classes are not evaluated (no stylesheet is applied here).
"""

from __future__ import annotations

import re

import lxml.html

from shared.content.metadata import parse_document

HIDING_STYLE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\b", re.I)
MARKERS = re.compile(r"\bhidden\b|display\s*:\s*none|visibility\s*:\s*hidden", re.I)
MOST = 0.5
"""Share of the page's text above which a hidden element is kept (see the module docstring)."""


def _hidden(el: lxml.html.HtmlElement) -> bool:
    flag = el.get("hidden")
    if flag is not None and flag.strip().lower() != "until-found":
        return True
    if (el.get("aria-hidden") or "").strip().lower() == "true":
        return True
    return bool(HIDING_STYLE.search(el.get("style") or ""))


def visible_html(html: str) -> str:
    """`html` without its hidden elements (rules in the module docstring); the input itself
    when nothing is hidden or it does not parse."""
    if not MARKERS.search(html):
        return html
    root = parse_document(html)
    if root is None:
        return html
    body = root.find("body")
    scope = body if body is not None else root
    found = [el for el in scope.iterdescendants() if isinstance(el.tag, str) and _hidden(el)]
    if not found:
        return html
    marked = set(found)
    total = len(scope.text_content())
    dropped = 0
    for el in found:
        if any(a in marked for a in el.iterancestors()):
            continue  # inside an element dropped (or kept) as a whole
        if total and len(el.text_content()) > MOST * total:
            marked.discard(el)  # most of the page: kept; what it hides itself is judged apart
            continue
        el.drop_tree()
        dropped += 1
    return lxml.html.tostring(root, encoding="unicode") if dropped else html
