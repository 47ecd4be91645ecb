"""Shingles: the agreement by key intersection is the multiset F1 exactly."""

from __future__ import annotations

import random
import sys
from collections import Counter

from shared.content.shingles import TOKEN, agreement, shingles


def reference(a: str, b: str, n: int = 4) -> float:
    """The benchmark's definition with Counters: F1 of the shared n-gram multiset."""

    def grams(text: str) -> Counter[tuple[str, ...]]:
        t = TOKEN.findall(text)
        return Counter(tuple(t[i : i + n]) for i in range(max(1, len(t) - n + 1)) if t)

    ga, gb = grams(a), grams(b)
    total = ga.total() + gb.total()
    return 2 * (ga & gb).total() / total if total else 0.0


def test_agreement_equals_the_multiset_f1_on_repetitive_random_texts() -> None:
    rng = random.Random(7)
    words = ["a", "b", "c", "the", "1", "x_y", "été"]
    for _ in range(2000):
        a = " ".join(rng.choices(words, k=rng.randrange(0, 30)))
        b = " ".join(rng.choices(words, k=rng.randrange(0, 30)))
        assert agreement(shingles(a), shingles(b)) == reference(a, b), (a, b)


def test_edges() -> None:
    assert agreement(shingles(""), shingles("")) == 0.0
    assert agreement(shingles("one two"), shingles("one two")) == 1.0
    assert agreement(shingles("a b c d a b c d"), shingles("a b c d")) == 2 * 1 / (5 + 1)
    assert agreement(shingles("ab c d e"), shingles("a bc d e")) == 0.0


def test_long_words_are_not_copied_into_the_shingles() -> None:
    """A hostile page of 64 kB "words" (bench_hostile's /huge): the n-grams refer to the
    words, so 300 of them cost kilobytes, not 300 x 256 kB of joined copies."""
    text = " ".join(c * 65533 for c in "abcdefghij" * 30)
    grams = shingles(text)
    assert grams.total == 297
    assert sum(sys.getsizeof(k) for k in grams.counts) < 100_000
