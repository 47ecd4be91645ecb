"""What a word is to the search: letters, digits and the combining marks written with them.

Python's `\\w` and FTS5's unicode61 tokenizer both leave out combining marks (Unicode
categories Mn, Mc, Me): the vowel signs and viramas of Devanagari, Bengali, Tamil and the
other Indic scripts. unicode61 splits an indexed word at them into fragments, in order; a
search word kept whole (`WORD`) becomes one quoted phrase of those same fragments, so
"नमस्ते" matches that word and not a page holding "नमस" and "त" apart (which it did when the
query was split at the marks too). FTS5 then marks each fragment in a snippet; `joined`
makes one highlight of them again.
"""

from __future__ import annotations

import re
import unicodedata


def _mark_ranges() -> str:
    """Every combining mark as a regex character-class body of ranges."""
    planes = (*range(0x20000), *range(0xE0000, 0xE1000))  # none elsewhere (Unicode 15)
    marks = [c for c in planes if unicodedata.category(chr(c))[0] == "M"]
    ranges: list[tuple[int, int]] = []
    for c in marks:
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1] = (ranges[-1][0], c)
        else:
            ranges.append((c, c))
    return "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


MARKS = _mark_ranges()
"""Combining marks (Unicode categories M*), as the body of a regex character class."""
WORD = re.compile(rf"[{MARKS}]*\w[\w{MARKS}]*")
"""A search word: word characters with the marks written with them (at least one letter,
digit or underscore: a mark alone is no word to FTS5 either)."""


def joined(snippet: str, open_mark: str, close_mark: str) -> str:
    """`snippet` with a word's highlighted fragments, split at its combining marks by the
    tokenizer, highlighted as one (the marks between and after them inside the highlight)."""
    between = re.compile(f"{re.escape(close_mark)}([{MARKS}]+){re.escape(open_mark)}")
    after = re.compile(f"{re.escape(close_mark)}([{MARKS}]+)")
    return after.sub(rf"\1{close_mark}", between.sub(r"\1", snippet))
