"""Scores for extracted text, computed the way the corpora's own benchmarks compute them.

- `shingle_counts` / `shingle_scores`: the article-extraction benchmark's measure. Tokens are
  `\\w+` matches; each text becomes a multiset of word 4-grams ("shingles"; a text shorter
  than 4 tokens is one shingle of what it has). Per document TP = shared shingles (with
  multiplicity), FP = extra predicted ones, FN = missed gold ones; the three are normalised
  to sum 1 so long pages weigh no more than short ones. Precision is averaged over documents
  with TP+FP > 0 (so an empty prediction costs recall only), recall over documents with
  TP+FN > 0, and F1 is the harmonic mean of those two averages.
- `segment_counts`: trafilatura's evaluation. A document has `with` segments (must appear in
  the main text) and `without` segments (must not); matching is substring search after
  collapsing whitespace. Counts are summed over the corpus and scored once.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

TOKEN = re.compile(r"\w+", re.UNICODE)


def shingles(text: str, n: int = 4) -> Counter[tuple[str, ...]]:
    """The multiset of word n-grams of `text`."""
    tokens = TOKEN.findall(text or "")
    return Counter(tuple(tokens[i : i + n]) for i in range(max(1, len(tokens) - n + 1)) if tokens)


def shingle_counts(gold: str, predicted: str) -> tuple[float, float, float]:
    """Normalised (TP, FP, FN) of one document."""
    g, p = shingles(gold), shingles(predicted)
    tp = sum((g & p).values())
    fp = sum((p - g).values())
    fn = sum((g - p).values())
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)


def _precision(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    return tp / (tp + fp) if tp + fp else 0.0


def _recall(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    return tp / (tp + fn) if tp + fn else 0.0


@dataclass(frozen=True)
class Scores:
    """Precision, recall and F1 of one extractor on one set."""

    precision: float
    recall: float
    f1: float
    documents: int


def shingle_scores(counts: Sequence[tuple[float, float, float]]) -> Scores:
    """Benchmark-style averages over documents (see the module docstring)."""
    precisions = [_precision(*c) for c in counts if c[0] + c[1] > 0]
    recalls = [_recall(*c) for c in counts if c[0] + c[2] > 0]
    p = sum(precisions) / len(precisions) if precisions else 0.0
    r = sum(recalls) / len(recalls) if recalls else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return Scores(p, r, f1, len(counts))


def _norm(text: str) -> str:
    return " ".join(text.split())


def segment_counts(
    result: str, with_: Iterable[str], without: Iterable[str]
) -> tuple[int, int, int, int]:
    """(TP, FP, FN, TN) of one document: `with` segments found, `without` segments found..."""
    text = _norm(result)
    wanted = [_norm(s) for s in with_]
    unwanted = [_norm(s) for s in without]
    tp = sum(1 for s in wanted if s in text)
    fp = sum(1 for s in unwanted if s in text)
    return tp, fp, len(wanted) - tp, len(unwanted) - fp


def segment_scores(counts: Sequence[tuple[int, int, int, int]]) -> Scores:
    """Corpus-level precision/recall/F1 from summed segment counts."""
    tp = sum(c[0] for c in counts)
    fp = sum(c[1] for c in counts)
    fn = sum(c[2] for c in counts)
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0
    return Scores(p, r, f1, len(counts))
