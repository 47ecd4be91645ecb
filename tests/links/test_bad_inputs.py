"""Hostile and broken inputs: huge posts, huge URLs, broken encodings and markup."""

from __future__ import annotations

import time

import pytest

from shared.links.canonical import RejectedUrl, canonicalize
from shared.links.link_extract import extract_links, extract_links_text
from shared.links.occurrences import analyze_post, occurrences_for_post

POST = "https://forum.example/t/x/1/2"


def test_post_with_5000_links() -> None:
    html = (
        "<p>"
        + " ".join(f'<a href="https://s{i}.example/p/{i}">l{i}</a>' for i in range(5000))
        + "</p>"
    )
    start = time.perf_counter()
    occ = occurrences_for_post(html, POST)
    elapsed = time.perf_counter() - start
    assert len(occ) == 5000
    assert occ[0].canonical_url == "https://s0.example/p/0"
    assert occ[-1].canonical_url == "https://s4999.example/p/4999"
    assert "l4999" in occ[-1].context_snippet
    # no quadratic blow-up (that would take minutes); speed itself is bench/bench_links.py's
    assert elapsed < 30, f"5,000 links took {elapsed:.1f}s"


def test_text_post_with_5000_links_and_quotes() -> None:
    text = "\n".join(
        (f"> https://q{i}.example/" if i % 2 else f"https://n{i}.example/") for i in range(5000)
    )
    start = time.perf_counter()
    links = extract_links_text(text, POST)
    assert time.perf_counter() - start < 5
    assert len(links) == 5000
    assert sum(link.in_quote for link in links) == 2500


def test_ten_kilobyte_url_in_a_post_is_rejected_and_reported() -> None:
    long_url = "https://example.com/?q=" + "a" * 10_240
    html = f'<a href="{long_url}">long</a><a href="https://ok.example/">ok</a>'
    result = analyze_post(html, POST)
    assert [o.canonical_url for o in result.occurrences] == ["https://ok.example/"]
    assert [r.reason for r in result.rejected] == ["too-long"]


@pytest.mark.parametrize(
    "url",
    [
        "https://e.example/%",
        "https://e.example/%g0",
        "https://e.example/?a=%2",
        "https://e.example/%%41",
    ],
)
def test_broken_percent_encoding(url: str) -> None:
    r = canonicalize(url)
    assert isinstance(r, RejectedUrl) and r.reason == "bad-percent-encoding"


WEIRD_HTML = [
    # truncated in the middle of a tag, an attribute, a quote, an entity
    '<p>see <a href="https://a.example/1">one</a> and <a href="https://b.exa',
    '<blockquote><p><a href="https://a.example/1">one</a>',
    "<aside class='quote'><blockquote><a href='https://a.example/1'",
    "<p>x &amp",
    # HTML in odd places
    '<a href="https://a.example/1"><a href="https://b.example/2">nested anchors</a></a>',
    '<a href="https://a.example/<b>bold</b>">x</a>',
    "<a href=https://a.example/unquoted>x</a>",
    '<a href="https://a.example/1" href="https://b.example/2">dup attr</a>',
    '<svg><a href="https://a.example/svg">svg</a></svg>',
    "<table><tr><a href='https://a.example/t'>in table</a></tr></table>",
    "<script>document.write('<a href=\"https://evil.example/\">')</script>",
    "<!-- <a href='https://commented.example/'>x</a> -->",
    "<![CDATA[<a href='https://cdata.example/'>x</a>]]>",
    "\x00<a href='https://nul.example/\x00'>x</a>",
    "<a href='https://a.example/\ud800'>lone surrogate</a>",
    "<" * 10_000,
    "<a href='" + "x" * 100_000 + "'>",
    "",
]


@pytest.mark.parametrize("html", WEIRD_HTML, ids=range(len(WEIRD_HTML)))
def test_weird_html_never_raises(html: str) -> None:
    links = extract_links(html, POST)
    assert all(link.url.startswith(("http://", "https://")) for link in links)
    analyze_post(html, POST)


def test_truncated_html_keeps_the_complete_links() -> None:
    links = extract_links(WEIRD_HTML[0], POST)
    assert links[0].url == "https://a.example/1"
    quoted = extract_links(WEIRD_HTML[1], POST)
    assert [(x.url, x.in_quote) for x in quoted] == [("https://a.example/1", True)]


def test_script_and_comment_links_are_not_links() -> None:
    for html in WEIRD_HTML[10:13]:
        assert extract_links(html, POST) == []


def test_bad_base_url_does_not_break_absolute_links() -> None:
    html = '<a href="https://a.example/x">x</a><a href="/rel">r</a>'
    for base in ("", "not a url", "http://[::1", "javascript:alert(1)"):
        assert [x.url for x in extract_links(html, base)][:1] == ["https://a.example/x"]


def test_non_string_input_gives_nothing() -> None:
    assert extract_links(None, POST) == []  # type: ignore[arg-type]
    assert extract_links_text(b"https://a.example/", POST) == []  # type: ignore[arg-type]
