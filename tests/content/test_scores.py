"""The benchmark's measures, on values worked out by hand."""

from __future__ import annotations

import pytest

from bench.extraction_scores import (
    segment_counts,
    segment_scores,
    shingle_counts,
    shingle_scores,
)
from bench.metadata_match import author_matches, date_matches, title_matches


def test_shingle_counts_are_normalised_word_4grams():
    # gold: a b c d e -> (a b c d), (b c d e); predicted adds f: + (c d e f)
    assert shingle_counts("a b c d e", "a, b c d e f") == pytest.approx((2 / 3, 1 / 3, 0))
    assert shingle_counts("a b c d e", "") == (0.0, 0.0, 1.0)
    assert shingle_counts("", "") == (0.0, 0.0, 0.0)
    assert shingle_counts("short", "short") == (1.0, 0.0, 0.0)  # < 4 tokens: one shingle


def test_shingle_scores_average_precision_and_recall_over_documents():
    s = shingle_scores([(1.0, 0.0, 0.0), (0.5, 0.5, 0.0), (0.0, 0.0, 1.0)])
    # precision over docs with tp+fp > 0: (1 + 0.5) / 2; recall over tp+fn > 0: (1 + 1 + 0) / 3
    assert s.precision == pytest.approx(0.75)
    assert s.recall == pytest.approx(2 / 3)
    assert s.f1 == pytest.approx(2 * 0.75 * (2 / 3) / (0.75 + 2 / 3))


def test_segments_are_counted_over_the_set():
    counts = segment_counts("Hello  big\nworld. Footer", ["big world", "missing"], ["Footer", "x"])
    assert counts == (1, 1, 1, 1)
    s = segment_scores([counts, (2, 0, 0, 2)])
    assert (s.precision, s.recall) == (0.75, 0.75)


def test_metadata_matching_rules():
    assert title_matches("Headline", "Headline - Site")
    assert title_matches("Headline : r/sub", "headline")
    assert not title_matches("Headline", "Other")
    assert author_matches("By Jane Doe\n   March 3", "jane doe")
    assert author_matches("A One, B Two", "B Two and A One")
    assert not author_matches("A One", "A One, B Two")
    assert date_matches("2020-01-02T23:30:00-05:00", "2020-01-03T04:30:00Z")
    assert date_matches("2020-01-02", "2020-01-02T23:30:00-05:00")
    assert not date_matches("2020-01-02", "2020-01-03")
    assert not date_matches("2020-01-02", None)
