"""Word 4-gram shingles: how much two texts agree (the article-extraction benchmark's unit)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

TOKEN = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Shingles:
    """The multiset of a text's word n-grams (tuples of words, which share the words'
    strings: a page of 64 kB "words" costs no copies of them). Two texts' common n-grams are
    a set intersection in C; a text with no repeated n-gram (most articles) shares exactly
    that many, otherwise the smaller counts are summed. The counts keep a repetitive text (a
    hostile page of one word) as small as its distinct n-grams."""

    counts: Counter[tuple[str, ...]]
    total: int

    @property
    def repeats(self) -> bool:
        return self.total != len(self.counts)


def shingles(text: str, n: int = 4) -> Shingles:
    """The multiset of word n-grams of `text` (tokens are `\\w+` matches); a text shorter than
    n tokens is one shingle of the tokens it has; an empty text has none."""
    tokens = TOKEN.findall(text)
    if not tokens:
        return Shingles(Counter(), 0)
    size = max(1, len(tokens) - n + 1)
    return Shingles(Counter(tuple(tokens[i : i + n]) for i in range(size)), size)


def agreement(a: Shingles, b: Shingles) -> float:
    """F1 of the shingles two texts share (0 when either is empty, 1 when they are equal)."""
    total = a.total + b.total
    if not total:
        return 0.0
    common = a.counts.keys() & b.counts.keys()
    if a.repeats or b.repeats:
        shared = sum(min(a.counts[k], b.counts[k]) for k in common)
    else:
        shared = len(common)
    return 2 * shared / total
