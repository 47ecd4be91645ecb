"""What a word is to the search: letters, digits and the combining marks written with them.

Python's `\\w` and FTS5's unicode61 tokenizer both leave out combining marks (Unicode
categories Mn, Mc, Me): the vowel signs and viramas of Devanagari, Bengali, Tamil and the
other Indic scripts. unicode61 splits an indexed word at them into fragments, in order; a
search word kept whole (`word()`) becomes one quoted phrase of those same fragments, so
"नमस्ते" matches that word and not a page holding "नमस" and "त" apart (which it did when the
query was split at the marks too). FTS5 then marks each fragment in a snippet; `joined`
makes one highlight of them again.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache


@cache
def marks() -> str:
    """Every combining mark (Unicode categories M*) as a regex character-class body of
    ranges; worked out at the first search (~20 ms), not at the web's start."""
    planes = (*range(0x20000), *range(0xE0000, 0xE1000))  # none elsewhere (Unicode 15)
    ranges: list[tuple[int, int]] = []
    for c in planes:
        if unicodedata.category(chr(c))[0] != "M":
            continue
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1] = (ranges[-1][0], c)
        else:
            ranges.append((c, c))
    return "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


@cache
def word() -> re.Pattern[str]:
    """A search word: word characters with the marks written with them (at least one letter,
    digit or underscore: a mark alone is no word to FTS5 either)."""
    return re.compile(rf"[{marks()}]*\w[\w{marks()}]*")


def joined(snippet: str, open_mark: str, close_mark: str) -> str:
    """`snippet` with a word's highlighted fragments, split at its combining marks by the
    tokenizer, highlighted as one (the marks between and after them inside the highlight)."""
    if open_mark not in snippet:
        return snippet
    between, after = _joiners(open_mark, close_mark)
    return after.sub(rf"\1{close_mark}", between.sub(r"\1", snippet))


@cache
def _joiners(open_mark: str, close_mark: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Marks between two highlights, and marks right after one."""
    close, opening = re.escape(close_mark), re.escape(open_mark)
    return re.compile(f"{close}([{marks()}]+){opening}"), re.compile(f"{close}([{marks()}]+)")
