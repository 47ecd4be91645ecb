"""The canonical text of one HTML version of a page: what the readable hook makes the search
text of (the article, sanitised, as plain text; the whole page's visible text when no article
is found), from one body. A liveness check compares the canonical texts of two raw bodies (the
newest capture's and the one it just fetched) made by this same function, never a text from
another pipeline, so a change is a change of the page and not of the extraction."""

from __future__ import annotations

from shared.content.article import Source, extract_article, page_text
from shared.content.inputs import DEFAULT_MAX_BYTES, DEFAULT_MAX_TAGS, cut_markup, decode_html
from shared.content.plaintext import plain_text
from shared.content.sanitize import sanitize_html


def canonical_text(
    body: bytes,
    url: str,
    content_type: str | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_tags: int = DEFAULT_MAX_TAGS,
) -> str:
    """The page's canonical text from its raw bytes (at most `max_bytes`, cut after
    `max_tags` tags: the extractors' time grows with the elements)."""
    html = cut_markup(decode_html(body[:max_bytes], content_type), max_tags)
    article = extract_article([Source("raw", html)])
    if article is not None and article.html:
        return plain_text(sanitize_html(article.html, url))
    return page_text(html)
