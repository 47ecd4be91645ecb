"""The article of a page: several extractors vote, the most agreed-upon candidate wins.

Each source (the raw HTML the fetch plugin stored, the DOM the browser rendered) is run
through trafilatura (its precision mode and its default mode) and readability-lxml; each
gives a candidate article in HTML. jusText's paragraphs vote too but are never chosen (it
gives text only). The chosen candidate is the one whose text shares the most word 4-gram
shingles with all the others (the medoid): an extractor that grabbed a comment section or
a navigation menu, or that dropped half the article, disagrees with the rest and loses.
On the article-extraction benchmark this beats every single extractor (docs/benchmarks.md).
Ties go to the earlier candidate (trafilatura precision on the rendered DOM first). Elements
the page hides (`hidden`, inline `display: none`, `aria-hidden`) are removed from each source
before any extractor sees it (shared.content.visible). When the rendered DOM and the raw HTML
show the same visible text (a static page), only the first is extracted.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import justext
import lxml.html
import trafilatura
from readability import Document
from trafilatura.htmlprocessing import build_html_output
from trafilatura.settings import Document as TrafilaturaDocument
from trafilatura.utils import normalize_unicode

from shared.content.boilerplate import paragraphs
from shared.content.plaintext import plain_text
from shared.content.shingles import Shingles, agreement, shingles
from shared.content.visible import visible_html

log = logging.getLogger(__name__)
STOPLIST = justext.get_stoplist("English")
MIN_WORDS = 5  # a candidate with fewer words is "no article"


@dataclass(frozen=True)
class Source:
    """One HTML version of the page: `name` says which (rendered, raw)."""

    name: str
    html: str


@dataclass(frozen=True)
class Candidate:
    """One extractor's article from one source."""

    extractor: str
    source: str
    html: str
    text: str


@dataclass(frozen=True)
class Article:
    """The chosen article: its (unsanitized) HTML, plain text and where it came from."""

    html: str
    text: str
    extractor: str
    source: str
    votes: dict[str, float]
    page: str = ""
    """The visible HTML of the version the article came from (for `illustrated`)."""


TRAFILATURA_OPTIONS: dict[str, Any] = {
    "output_format": "html",
    "include_comments": False,
    "include_tables": True,
    "include_links": True,
    "include_formatting": True,
}


def _trafilatura(html: str, precision: bool, images: bool = False) -> str:
    """``trafilatura.extract(html, output_format="html", ...)`` without its last step for
    HTML output, a simhash fingerprint of the text that nothing here reads (~20 ms a page,
    as long as the rest of the extraction). A test checks both give the same article."""
    document = trafilatura.bare_extraction(
        html,
        favor_precision=precision,
        as_dict=False,
        include_images=images,
        **TRAFILATURA_OPTIONS,
    )
    if not isinstance(document, TrafilaturaDocument):
        return ""
    return normalize_unicode(build_html_output(document))


def _readability(html: str) -> str:
    try:
        return str(Document(html).summary(html_partial=True))
    except Exception as exc:  # readability raises bare Exceptions on odd documents
        log.info("readability failed: %s", exc)
        return ""


def _justext(html: str) -> str:
    try:
        found = paragraphs(html.encode("utf-8"), STOPLIST)
    except Exception as exc:  # lxml errors on empty/odd documents
        log.info("justext failed: %s", exc)
        return ""
    return "\n\n".join(p.text for p in found if not p.is_boilerplate)


EXTRACTORS = (
    ("trafilatura-precision", lambda html: _trafilatura(html, precision=True)),
    ("trafilatura", lambda html: _trafilatura(html, precision=False)),
    ("readability", _readability),
)


def candidates(sources: Sequence[Source]) -> list[Candidate]:
    """Every extractor's article from every source, in preference order."""
    found = []
    for source in sources:
        if not source.html.strip():
            continue
        for name, run in EXTRACTORS:
            html = run(source.html)
            found.append(Candidate(name, source.name, html, plain_text(html) if html else ""))
    return found


def choose(found: Sequence[Candidate], voters: Sequence[str] = ()) -> Article | None:
    """The medoid candidate (see the module docstring); None when no candidate has text."""
    usable = [c for c in found if len(c.text.split()) >= MIN_WORDS]
    if not usable:
        return None
    grams: list[Shingles] = [shingles(c.text) for c in usable]
    others = grams + [shingles(v) for v in voters if v.strip()]
    pair = {  # agreement is symmetric: each pair once
        (i, j): agreement(grams[i], others[j])
        for i in range(len(grams))
        for j in range(i + 1, len(others))
    }
    votes = [
        sum(pair[min(i, j), max(i, j)] for j in range(len(others)) if j != i)
        for i in range(len(grams))
    ]
    best = max(range(len(usable)), key=lambda i: (votes[i], -i))
    winner = usable[best]
    return Article(
        html=winner.html,
        text=winner.text,
        extractor=winner.extractor,
        source=winner.source,
        votes={
            f"{c.source}/{c.extractor}": round(v, 4) for c, v in zip(usable, votes, strict=True)
        },
    )


SAME_PAGE = 0.95
"""Shingle agreement of two versions' visible text above which they count as one page."""


def distinct(sources: Sequence[Source]) -> list[Source]:
    """The sources minus those whose visible text is the same as an earlier one's: a static
    page's rendered DOM and raw HTML give the extractors nothing new to vote on (and cost
    ~100 ms of CPU each)."""
    kept: list[tuple[Source, Shingles]] = []
    for source in sources:
        if not source.html.strip():
            continue
        grams = shingles(page_text(source.html))
        if not any(agreement(grams, other) >= SAME_PAGE for _, other in kept):
            kept.append((source, grams))
    return [source for source, _ in kept]


def extract_article(sources: Sequence[Source]) -> Article | None:
    """The page's article from its HTML versions (rendered first), or None if none is found.
    Elements the page hides are removed first (shared.content.visible); versions with the
    same visible text are then extracted once (`distinct`)."""
    unique = distinct([Source(s.name, visible_html(s.html)) for s in sources])
    found = candidates(unique)
    voters = [_justext(s.html) for s in unique]
    article = choose(found, voters)
    if article is None:
        return None
    return replace(article, page=next(s.html for s in unique if s.name == article.source))


def illustrated(article: Article) -> str:
    """The article's HTML with its images, for reading. The candidates are extracted without
    them (trafilatura then also leaves out figure captions, which the benchmarks' gold texts
    leave out too), so a trafilatura winner is extracted once more from its version keeping
    images; readability-lxml's article has them already. The search text stays the
    article's own `text`."""
    if not article.page or not article.extractor.startswith("trafilatura"):
        return article.html
    precise = article.extractor == "trafilatura-precision"
    return _trafilatura(article.page, precision=precise, images=True) or article.html


def page_text(html: str) -> str:
    """The whole page's visible text (the fallback for search when no article is found)."""
    try:
        root = lxml.html.document_fromstring(html)
    except Exception:  # empty or unparsable document
        return ""
    body = root.find("body")
    return plain_text(lxml.html.tostring(body if body is not None else root, encoding="unicode"))
