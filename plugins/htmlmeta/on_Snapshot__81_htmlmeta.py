#!/usr/bin/env python3
"""Hook (step 8, post-processing): metadata and text from the fetch plugin's raw HTML.

Reads `../fetch/body.html` (written by the fetch hook in step 6); emits one Metadata record
(title, description, author, published time, site name, language from <title>, OpenGraph,
Twitter card and common meta tags), one Text record (the page's visible text, blocks on their
own lines, whitespace normalised) and writes both to `metadata.json`. When fetch stored no HTML
the result is `skipped` (nothing to read; not retried).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser

from shared.hooks.records import ArchiveResultRecord, MetadataRecord, TextRecord, emit

META_KEYS: dict[str, tuple[str, ...]] = {
    "title": ("og:title", "twitter:title"),
    "description": ("og:description", "twitter:description", "description"),
    "author": ("author", "article:author", "twitter:creator", "dc.creator"),
    "published_at": (
        "article:published_time",
        "og:published_time",
        "date",
        "dc.date",
        "pubdate",
        "datePublished",
    ),
    "site_name": ("og:site_name", "application-name", "twitter:site"),
}
DROP = "script, style, noscript, template, svg, iframe, object, head"
BLOCKS = re.compile(r"[ \t\r\f\v]+")


def meta_values(tree: LexborHTMLParser) -> dict[str, str]:
    """Every <meta> name/property (lower-cased) to its content; the first one wins."""
    found: dict[str, str] = {}
    for node in tree.css("meta"):
        key = (node.attributes.get("property") or node.attributes.get("name") or "").strip()
        content = (node.attributes.get("content") or "").strip()
        if key and content:
            found.setdefault(key.lower(), content)
    for node in tree.css("[itemprop=datePublished]"):
        value = node.attributes.get("content") or node.attributes.get("datetime")
        if value:
            found.setdefault("datepublished", value.strip())
    return found


def metadata(tree: LexborHTMLParser) -> MetadataRecord:
    """The page's metadata: meta tags first, then <title> and <html lang>."""
    meta = meta_values(tree)
    values: dict[str, str | None] = {
        field: next((meta[k.lower()] for k in keys if k.lower() in meta), None)
        for field, keys in META_KEYS.items()
    }
    if not values["title"] and (title := tree.css_first("title")):
        values["title"] = " ".join(title.text().split()) or None
    html = tree.css_first("html")
    lang = html.attributes.get("lang") if html is not None else None
    return MetadataRecord(language=(lang or meta.get("og:locale")), **values)


def visible_text(tree: LexborHTMLParser, limit: int) -> str:
    """Visible text: one line per block, runs of spaces collapsed, at most `limit` chars."""
    for node in tree.css(DROP):
        node.decompose()
    body = tree.body or tree.root
    raw = body.text(separator="\n") if body is not None else ""
    lines = (BLOCKS.sub(" ", line).strip() for line in raw.splitlines())
    return "\n".join(line for line in lines if line)[:limit]


def main() -> int:
    source = Path("..") / "fetch" / "body.html"
    if not source.exists():
        emit(ArchiveResultRecord(status="skipped", output_str="no HTML fetched"))
        return 0
    limit = int(os.environ.get("HTMLMETA_MAX_TEXT_CHARS", "200000"))
    tree = LexborHTMLParser(source.read_bytes())
    record = metadata(tree)
    text = visible_text(tree, limit) if limit else ""
    Path("metadata.json").write_text(json.dumps(record.model_dump(exclude_none=True), indent=1))
    emit(record)
    if text:
        emit(TextRecord(text=text))
    emit(ArchiveResultRecord(status="succeeded", output_str=record.title or "(untitled)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
