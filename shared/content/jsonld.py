"""JSON-LD blocks of a page: the first article-like object and the names in it."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from typing import Any

CDATA = re.compile(r"^\s*(?://\s*)?<!\[CDATA\[|(?://\s*)?\]\]>\s*$")
ARTICLE_TYPES = frozenset(
    {
        "article", "newsarticle", "blogposting", "reportagenewsarticle", "analysisnewsarticle",
        "opinionnewsarticle", "techarticle", "scholarlyarticle", "socialmediaposting",
        "discussionforumposting", "liveblogposting", "webpage", "videoobject", "report",
        "review", "medicalwebpage", "qapage", "question", "recipe", "creativework",
    }
)  # fmt: skip


def _objects(value: Any) -> Iterator[dict[str, Any]]:
    """Every dict in a JSON-LD value, descending into lists and @graph."""
    if isinstance(value, list):
        for item in value:
            yield from _objects(item)
    elif isinstance(value, dict):
        yield value
        if "@graph" in value:
            yield from _objects(value["@graph"])


def _types(obj: dict[str, Any]) -> set[str]:
    kind = obj.get("@type")
    kinds = kind if isinstance(kind, list) else [kind]
    return {k.lower() for k in kinds if isinstance(k, str)}


def parse_blocks(blocks: list[str]) -> list[dict[str, Any]]:
    """All objects of the page's JSON-LD scripts (broken ones are skipped)."""
    found: list[dict[str, Any]] = []
    for block in blocks:
        try:
            data = json.loads(CDATA.sub("", block).strip().rstrip(";"))
        except (ValueError, RecursionError):
            continue
        found.extend(_objects(data))
    return found


def main_object(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The article-like object (by @type, preferring one with a headline), else {}."""
    ranked = [o for o in objects if _types(o) & ARTICLE_TYPES]
    ranked.sort(key=lambda o: ("webpage" in _types(o), "headline" not in o))
    return ranked[0] if ranked else {}


def names(value: Any) -> list[str]:
    """Person/organisation names from a JSON-LD author/publisher value."""
    out: list[str] = []
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, dict):
            item = item.get("name")
        for name in item if isinstance(item, list) else [item]:
            found = text(name)
            if found:
                out.append(found)
    return out


def text(value: Any) -> str | None:
    """A JSON-LD scalar as text (first item of a list, entities decoded), or None."""
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, dict):
        value = value.get("@value") or value.get("name") or value.get("url")
    if not isinstance(value, str) or not value.strip():
        return None
    return html.unescape(value).strip()  # some sites HTML-escape JSON-LD strings
