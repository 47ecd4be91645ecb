"""How the extraction benchmark decides that a title, author or date "matches" the gold value.

- Text is compared after NFKD with accents dropped, case folding, `_` as a space,
  typographic quotes/dashes made plain, whitespace collapsed and surrounding
  quotes/punctuation trimmed.
- Title: equal, or equal once site-name parts are cut from either side: gold sets disagree
  on whether "Headline - Site" keeps the " - Site" (Readability cuts it, metascraper keeps
  og:title as is), so a title matches when one is the other minus leading or trailing
  segments separated by ` - `, ` – `, ` — `, ` | `, `: `, ` · ` or ` » `.
- Author: "By " and similar prefixes dropped; the names (split on `,`, `;`, `&`, ` and `)
  must be the same set; a multi-line gold byline is compared on its first line.
- Date: both parsed (ISO 8601 or any common form); the calendar days must be equal: in UTC
  when both carry a time zone, else as written.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, date, datetime

from dateutil import parser as dateparser

SEPARATORS = re.compile(r"\s+(?:-|–|—|\||·|»)\s+|\s*:\s+")
PLAIN = str.maketrans(
    {"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-", "\xa0": " ", "_": " "}
)
BY = re.compile(r"^(?:by|von|par|por|door|posted by|written by)\s*:?\s+", re.I)
NAME_SPLIT = re.compile(r"\s*(?:,|;|&|\band\b|\bund\b|\bet\b|\by\b)\s*", re.I)


def norm(value: str) -> str:
    """Comparable form of a text value."""
    value = unicodedata.normalize("NFKD", value.translate(PLAIN))
    value = "".join(c for c in value if not unicodedata.combining(c)).casefold()
    return " ".join(value.split()).strip(" \"'.,;:!?")


def _variants(title: str) -> set[str]:
    """The title with any number of leading or trailing segments cut."""
    found = {title}
    cuts = [m.span() for m in SEPARATORS.finditer(title)]
    for start, end in cuts:
        found.add(norm(title[end:]))
        found.add(norm(title[:start]))
    return found


def title_matches(gold: str, found: str | None) -> bool:
    if not found:
        return False
    g, f = norm(gold), norm(found)
    return g == f or g in _variants(f) or f in _variants(g)


def _names(value: str) -> set[str]:
    value = BY.sub("", norm(value))
    return {n for n in (norm(p) for p in NAME_SPLIT.split(value)) if n}


def author_matches(gold: str, found: str | None) -> bool:
    """Same set of names; a multi-line gold byline (Readability keeps the raw byline text,
    dates and job titles included) is compared on its first line."""
    first_line = next((line for line in gold.splitlines() if line.strip()), gold)
    return bool(found) and _names(first_line) == _names(found or "")


def _day(value: str) -> date | None:
    try:
        parsed = dateparser.parse(value)
    except (ValueError, OverflowError):
        return None
    if not isinstance(parsed, datetime):
        return None
    return parsed.date()


def _day_pair(gold: str, found: str) -> tuple[date | None, date | None]:
    try:
        g, f = dateparser.parse(gold), dateparser.parse(found)
    except (ValueError, OverflowError):
        return _day(gold), _day(found)
    if g.tzinfo is not None and f.tzinfo is not None:
        return g.astimezone(UTC).date(), f.astimezone(UTC).date()
    return g.date(), f.date()


def date_matches(gold: str, found: str | None) -> bool:
    if not found:
        return False
    g, f = _day_pair(gold, found)
    return g is not None and g == f
