"""Word 4-gram shingles: how much two texts agree (the article-extraction benchmark's unit)."""

from __future__ import annotations

import re
from collections import Counter

TOKEN = re.compile(r"\w+", re.UNICODE)

Shingles = frozenset[str]
"""A multiset of word n-grams as a set: each n-gram is its words joined by a space (words are
`\\w+`, so the join is unambiguous), and its k-th repeat (k > 1) is that string with `\\0k`
appended. The size of two such sets' intersection is the multisets' (the sum of the smaller
counts), computed by a set intersection in C instead of a Python loop over counts."""


def shingles(text: str, n: int = 4) -> Shingles:
    """The multiset of word n-grams of `text` (tokens are `\\w+` matches); a text shorter than
    n tokens is one shingle of the tokens it has; an empty text has none."""
    tokens = TOKEN.findall(text)
    if not tokens:
        return frozenset()
    grams = [" ".join(tokens[i : i + n]) for i in range(max(1, len(tokens) - n + 1))]
    unique = frozenset(grams)
    if len(unique) == len(grams):
        return unique
    repeats = [(gram, count) for gram, count in Counter(grams).items() if count > 1]
    return unique.union(f"{gram}\0{k}" for gram, count in repeats for k in range(2, count + 1))


def agreement(a: Shingles, b: Shingles) -> float:
    """F1 of the shingles two texts share (0 when either is empty, 1 when they are equal)."""
    total = len(a) + len(b)
    return 2 * len(a & b) / total if total else 0.0
