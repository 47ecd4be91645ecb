"""Word 4-gram shingles: how much two texts agree (the article-extraction benchmark's unit)."""

from __future__ import annotations

import re
from collections import Counter

TOKEN = re.compile(r"\w+", re.UNICODE)

Shingles = Counter[tuple[str, ...]]


def shingles(text: str, n: int = 4) -> Shingles:
    """The multiset of word n-grams of `text` (tokens are `\\w+` matches); a text shorter than
    n tokens is one shingle of the tokens it has; an empty text has none."""
    tokens = TOKEN.findall(text)
    return Counter(tuple(tokens[i : i + n]) for i in range(max(1, len(tokens) - n + 1)) if tokens)


def agreement(a: Shingles, b: Shingles) -> float:
    """F1 of the shingles two texts share (0 when either is empty, 1 when they are equal)."""
    total = sum(a.values()) + sum(b.values())
    return 2 * sum((a & b).values()) / total if total else 0.0
