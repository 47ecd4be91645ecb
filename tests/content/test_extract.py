"""extract_article: the vote between extractors, on a hand-made page and a corpus sample."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from bench.extraction_scores import shingle_counts
from shared.content.article import (
    Candidate,
    Source,
    choose,
    extract_article,
    illustrated,
    page_text,
)
from shared.content.plaintext import plain_text

PARAS = [
    "The city council voted on Tuesday to expand the bicycle network across the river, "
    "adding twelve kilometres of protected lanes by the end of next year.",
    "Supporters said the plan would cut traffic deaths, while shop owners worried about "
    "losing parking spaces in front of their stores on the main street.",
    "The mayor promised a review after six months and said the money comes from the "
    "regional transport fund rather than from local taxes.",
    "Construction starts in spring, and the first section should open before the summer "
    "holidays if the weather allows the crews to work without long breaks.",
]
NAV = "".join(f"<li><a href='/s{i}'>Section {i} news and more</a></li>" for i in range(30))
PAGE = (
    "<html><head><title>Council expands bike lanes</title></head><body>"
    f"<nav><ul>{NAV}</ul></nav><main><article><h1>Council expands bike lanes</h1>"
    + "".join(f"<p>{p}</p>" for p in PARAS)
    + "</article></main><footer><p>Copyright 2024 Example News. All rights reserved. "
    "Privacy policy. Terms of use. Cookie settings.</p></footer></body></html>"
)


def test_article_is_found_and_boilerplate_left_out():
    article = extract_article([Source("raw", PAGE)])
    assert article is not None
    for p in PARAS:
        assert p in article.text
    assert "Section 3 news" not in article.text
    assert "All rights reserved" not in article.text
    assert article.source == "raw"
    assert set(article.votes) >= {"raw/trafilatura-precision", "raw/readability"}


def test_the_article_for_reading_has_its_images_and_the_same_text():
    figure = '<figure><img src="/lanes.jpg" alt="New lanes"></figure>'
    page = PAGE.replace(f"<p>{PARAS[1]}</p>", f"<p>{PARAS[1]}</p>{figure}")
    article = extract_article([Source("raw", page)])
    assert article is not None and "<img" not in article.html
    reading = illustrated(article)
    assert '<img src="/lanes.jpg"' in reading
    assert plain_text(reading) == article.text


def test_no_article_in_an_empty_page():
    assert extract_article([Source("raw", "")]) is None
    assert extract_article([Source("raw", "<html><body></body></html>")]) is None


def test_page_text_is_the_whole_visible_page():
    text = page_text(PAGE)
    assert "Section 3 news" in text and PARAS[0] in text and "Council" in text
    assert page_text("") == ""


def test_the_candidate_most_others_agree_with_wins():
    good = " ".join(PARAS)
    cands = [
        Candidate("a", "rendered", "<p>x</p>", good + " Reader comments: first! great post"),
        Candidate("b", "rendered", "<p>y</p>", good),
        Candidate("c", "raw", "<p>z</p>", PARAS[0]),
    ]
    chosen = choose(cands, voters=[good])
    assert chosen is not None and chosen.extractor == "b"
    assert choose([Candidate("a", "raw", "", "too short")]) is None


def test_corpus_sample_scores_well(corpora: Path):
    base = corpora / "extraction" / "article-extraction-benchmark"
    gold = json.loads((base / "ground-truth.json").read_text())
    for path in sorted((base / "html").glob("*.html.gz"))[:3]:
        html = gzip.decompress(path.read_bytes()).decode("utf-8")
        article = extract_article([Source("raw", html)])
        assert article is not None
        tp, fp, fn = shingle_counts(gold[path.name.split(".")[0]]["articleBody"], article.text)
        assert 2 * tp / (2 * tp + fp + fn) > 0.8, path.name


def test_versions_with_the_same_text_are_extracted_once():
    from shared.content.article import distinct

    shell = "<html><body><div id='app'>Loading…</div></body></html>"
    same = PAGE.replace("<html>", "<html data-rendered='1'>")
    assert [s.name for s in distinct([Source("rendered", same), Source("raw", PAGE)])] == [
        "rendered"
    ]
    both = distinct([Source("rendered", PAGE), Source("raw", shell)])
    assert [s.name for s in both] == ["rendered", "raw"]
    assert distinct([Source("rendered", ""), Source("raw", PAGE)]) == [Source("raw", PAGE)]
    article = extract_article([Source("rendered", same), Source("raw", PAGE)])
    assert article is not None and article.source == "rendered"
    assert all(key.startswith("rendered/") for key in article.votes)


def test_text_the_page_hides_is_not_in_the_article():
    hidden = PARAS[0].replace("council", "committee")
    page = PAGE.replace(f"<p>{PARAS[1]}</p>", f"<p>{PARAS[1]}</p><div hidden><p>{hidden}</p></div>")
    article = extract_article([Source("raw", page)])
    assert article is not None
    assert PARAS[1] in article.text and "committee" not in article.text


def test_trafilatura_without_its_fingerprint_gives_what_extract_gives(corpora: Path):
    """shared.content.article calls trafilatura's steps without the fingerprint; an upgrade
    that changes what `extract` does after `bare_extraction` shows up here."""
    import trafilatura

    from shared.content.article import TRAFILATURA_OPTIONS, _trafilatura

    base = corpora / "extraction" / "article-extraction-benchmark" / "html"
    pages = [PAGE, "<html><body></body></html>"] + [
        gzip.decompress(p.read_bytes()).decode("utf-8") for p in sorted(base.glob("*.gz"))[:6]
    ]
    for html in pages:
        for precision in (True, False):
            expected = trafilatura.extract(html, favor_precision=precision, **TRAFILATURA_OPTIONS)
            assert _trafilatura(html, precision) == (expected or "")
