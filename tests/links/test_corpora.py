"""The library against third-party data (skipped when ../shared/corpora is absent).

Each test prints its score (run with ``-s``) and asserts a threshold at what the code
achieves today, so a regression fails. What each score skips, and why, is in the
docstrings of ``testkit/link_scores.py``.
"""

from __future__ import annotations

from collections.abc import Callable

from shared.links.link_extract import extract_links
from testkit import link_scores as scores
from testkit.link_corpus import cooked_samples


def run(fn: Callable[[], scores.Score]) -> scores.Score:
    score = fn()
    print("\n" + score.line())
    return score


def test_cooked_samples_links_and_quote_flags() -> None:
    s = run(scores.score_cooked_samples)
    assert s.total >= 15  # the samples do contain targets: not vacuous
    assert s.extra["expected quote links"] >= 1
    assert s.passed == s.total == s.extra["extracted"], s.failures


def test_samples_skip_what_is_not_a_target() -> None:
    """Mentions, lightboxes and the forum's own links appear in the samples and are dropped."""
    dropped = 0
    for sample in cooked_samples():
        got = {x.url for x in extract_links(sample["cooked"], sample["post_url"])}
        for link in sample["links_in_cooked"]:
            if link["a_class"] in ("mention", "lightbox") or link["href"].startswith("/"):
                assert link["href"] not in got
                dropped += 1
    assert dropped >= 20


def test_json_posts_against_oracle() -> None:
    s = run(scores.score_json_posts)
    assert s.total >= 150
    assert s.rate >= 0.99, s.failures
    found, targets = map(int, s.extra["targets found"].split("/"))
    assert targets >= 50 and found == targets
    assert s.extra["quote links"] >= 10


def test_rss_items_against_oracle() -> None:
    s = run(scores.score_rss)
    assert s.total == 100
    assert s.rate >= 0.99, s.failures
    found, targets = map(int, s.extra["targets found"].split("/"))
    assert targets >= 40 and found == targets


def test_rss_and_json_renderings_of_the_same_post_agree() -> None:
    s = run(scores.score_rss_vs_json)
    assert s.total >= 45
    assert s.passed == s.total


def test_raw_markdown_fallback_agrees_with_cooked() -> None:
    s = run(scores.score_raw_vs_cooked)
    assert s.total >= 8
    assert s.rate >= 0.85, s.failures


def test_w3lib_canonicalize_url() -> None:
    s = run(scores.score_w3lib_canonicalize)
    assert s.total >= 45
    assert s.rate >= 0.97, s.failures


def test_w3lib_url_query_cleaner_removal() -> None:
    s = run(scores.score_w3lib_query_cleaner)
    assert s.total >= 4 and s.passed == s.total


def test_duckduckgo_parameter_tests_with_their_list() -> None:
    s = run(scores.score_ddg_engine)
    assert s.total >= 12 and s.passed == s.total, s.failures


def test_duckduckgo_parameters_are_in_our_rules() -> None:
    s = run(scores.score_ddg_params_covered)
    assert s.total >= 20 and s.passed == s.total, s.failures


def test_duckduckgo_amp_unwrapping() -> None:
    s = run(scores.score_ddg_amp)
    assert s.total == 5 and s.passed == s.total


def test_whatwg_absolute_http_urls() -> None:
    s = run(scores.score_whatwg)
    assert s.total >= 150
    assert s.rate >= 0.8, s.failures
    same, accepted = map(int, s.extra["host equal to the browser's"].split("/"))
    assert same / accepted >= 0.97
