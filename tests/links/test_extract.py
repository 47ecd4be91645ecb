"""Extraction rules (issue rule 1), table-driven."""

from __future__ import annotations

import pytest

from shared.links.link_extract import (
    CONTEXT_CHARS,
    ExtractedLink,
    extract_links,
    extract_links_text,
)

POST = "https://forum.example/t/some-topic/42/7"


def pairs(html: str, **kw: object) -> list[tuple[str, bool]]:
    return [(x.url, x.in_quote) for x in extract_links(html, POST, **kw)]  # type: ignore[arg-type]


QUOTE_ASIDE = (
    '<aside class="quote no-group" data-username="bob" data-post="3" data-topic="42">'
    '<div class="title"><div class="quote-controls"></div>'
    '<a href="https://forum.example/t/some-topic/42/3">Topic</a> bob:</div>'
    "<blockquote><p>see {inner}</p></blockquote></aside>"
)
ONEBOX = (
    '<aside class="onebox allowlistedgeneric" data-onebox-src="{src}">'
    '<header class="source"><a href="{src}" target="_blank">site</a></header>'
    '<article class="onebox-body"><h3><a href="{src}">Title</a></h3>'
    '<p>by <a href="https://other.example/author">Author</a></p></article></aside>'
)

CASES: list[tuple[str, str, list[tuple[str, bool]]]] = [
    ("plain link", '<p><a href="https://a.example/x">x</a></p>', [("https://a.example/x", False)]),
    (
        "blockquote link is a quote link",
        '<blockquote><p><a href="https://a.example/q">q</a></p></blockquote>',
        [("https://a.example/q", True)],
    ),
    (
        "aside.quote link is a quote link; the quote's own title link is the forum's",
        QUOTE_ASIDE.format(inner='<a href="https://a.example/q">q</a>'),
        [("https://a.example/q", True)],
    ),
    (
        "nested quotes",
        "<blockquote><blockquote><a href='https://a.example/n'>n</a></blockquote></blockquote>",
        [("https://a.example/n", True)],
    ),
    (
        "onebox: one occurrence for the previewed URL, its other links dropped",
        ONEBOX.format(src="https://news.example/story"),
        [("https://news.example/story", False)],
    ),
    (
        "onebox and a plain link to the same URL: one occurrence",
        '<p><a href="https://news.example/story">s</a></p>'
        + ONEBOX.format(src="https://news.example/story"),
        [("https://news.example/story", False)],
    ),
    (
        "onebox inside a quote",
        "<blockquote>" + ONEBOX.format(src="https://news.example/s") + "</blockquote>",
        [("https://news.example/s", True)],
    ),
    (
        "lazy video container",
        '<div class="youtube-onebox lazy-video-container" data-video-id="HQD2cMVuNWk" '
        'data-video-title="A title"><a href="https://www.youtube.com/watch?v=HQD2cMVuNWk">'
        '<img class="youtube-thumbnail" src="/uploads/x.jpg"></a></div>',
        [("https://www.youtube.com/watch?v=HQD2cMVuNWk", False)],
    ),
    (
        "inline onebox is an ordinary link",
        '<p><a href="https://curi.us/1-x" class="inline-onebox">Curi</a></p>',
        [("https://curi.us/1-x", False)],
    ),
    ("mention", '<a class="mention" href="/u/bob">@bob</a>', []),
    ("group mention", '<a class="mention-group" href="/g/team">@team</a>', []),
    ("hashtag", '<a class="hashtag-cooked" href="/c/cat/5"><span>#cat</span></a>', []),
    ("old hashtag", '<a class="hashtag" href="https://x.example/tag/a">#a</a>', []),
    (
        "lightbox",
        '<div class="lightbox-wrapper"><a class="lightbox" href="https://forum.example/uploads/'
        'default/original/1X/a.png"><img src="x.png"></a></div>',
        [],
    ),
    (
        "lightbox on a CDN host is still a lightbox",
        '<div class="lightbox-wrapper"><a class="lightbox" href="https://cdn.example/a.png">'
        "</a></div>",
        [],
    ),
    ("forum topic link", '<a href="https://forum.example/t/other/9">t</a>', []),
    ("forum user link (relative)", '<a href="/u/alice">alice</a>', []),
    ("forum upload attachment", '<a class="attachment" href="/uploads/short-url/a.pdf">a</a>', []),
    ("footnote anchor", '<a href="#footnote-1">1</a>', []),
    ("heading anchor", '<a class="anchor" href="https://x.example/#h">#</a>', []),
    ("discourse cdn", '<a href="https://sjc1.discourse-cdn.com/site/original/a.png">a</a>', []),
    (
        "relative link to another site path is resolved (and is the forum's)",
        '<a href="../../other/1">o</a>',
        [],
    ),
    (
        "protocol-relative link",
        '<a href="//cdn.other.example/x">x</a>',
        [("https://cdn.other.example/x", False)],
    ),
    (
        "bare www domain href is taken as a web address",
        '<a href="www.example.org/page">p</a>',
        [("http://www.example.org/page", False)],
    ),
    ("javascript", '<a href="javascript:alert(1)">x</a>', []),
    ("data", '<a href="data:text/html,hi">x</a>', []),
    ("mailto", '<a href="mailto:a@b.example">x</a>', []),
    ("tel", '<a href="tel:+123">x</a>', []),
    ("ftp ignored", '<a href="ftp://files.example/a">x</a>', []),
    ("empty href", '<a href="">x</a><a>no href</a>', []),
    (
        "duplicates: one per (url, in_quote)",
        '<p><a href="https://a.example/d">1</a> <a href="https://a.example/d">2</a></p>'
        '<blockquote><a href="https://a.example/d">3</a><a href="https://a.example/d">4</a>'
        "</blockquote>",
        [("https://a.example/d", False), ("https://a.example/d", True)],
    ),
    (
        "document order",
        '<p><a href="https://b.example/">b</a></p><p><a href="https://a.example/">a</a></p>',
        [("https://b.example/", False), ("https://a.example/", False)],
    ),
    (
        "whitespace in href is stripped",
        '<a href="  https://a.example/w\n ">w</a>',
        [("https://a.example/w", False)],
    ),
]


@pytest.mark.parametrize(("name", "html", "expected"), CASES, ids=[c[0] for c in CASES])
def test_extraction_rules(name: str, html: str, expected: list[tuple[str, bool]]) -> None:
    assert pairs(html) == expected


def test_forum_hosts_are_not_targets() -> None:
    html = '<a href="https://forum-cdn.example/t/x/1">a</a><a href="https://b.example/">b</a>'
    assert pairs(html, forum_hosts=["forum-cdn.example"]) == [("https://b.example/", False)]
    assert len(pairs(html)) == 2


def test_context_snippet_is_short_and_around_the_link() -> None:
    words = " ".join(f"w{i}" for i in range(300))
    html = f'<p>{words} <a href="https://a.example/c">THE LINK</a> {words}</p>'
    [link] = extract_links(html, POST)
    assert "THE LINK" in link.context
    assert len(link.context) <= CONTEXT_CHARS + 2  # + the two ellipses
    assert link.context.startswith("…") and link.context.endswith("…")


def test_context_of_repeated_link_text_follows_each_link() -> None:
    html = (
        '<p>first part <a href="https://a.example/1">here</a> middle '
        + "x " * 150
        + 'second part <a href="https://a.example/2">here</a> end</p>'
    )
    one, two = extract_links(html, POST)
    assert "first part" in one.context
    assert "second part" in two.context


def test_onebox_context_is_the_preview_text() -> None:
    [link] = extract_links(ONEBOX.format(src="https://news.example/s"), POST)
    assert "Title" in link.context


def test_extracted_link_is_frozen() -> None:
    link = ExtractedLink("https://a.example/", False, "")
    with pytest.raises(AttributeError):
        link.url = "x"  # type: ignore[misc]


TEXT_CASES: list[tuple[str, str, list[tuple[str, bool]]]] = [
    ("bare url", "see https://a.example/x now", [("https://a.example/x", False)]),
    ("www url", "see www.a.example/x.", [("http://www.a.example/x", False)]),
    (
        "[quote] is a quote",
        '[quote="bob, post:3, topic:42"]\nhttps://a.example/q\n[/quote]\nhttps://a.example/r',
        [("https://a.example/q", True), ("https://a.example/r", False)],
    ),
    (
        "nested quotes",
        "[quote][quote]https://a.example/n[/quote] https://a.example/m[/quote] https://a.example/o",
        [
            ("https://a.example/n", True),
            ("https://a.example/m", True),
            ("https://a.example/o", False),
        ],
    ),
    (
        "unclosed quote runs to the end",
        "[quote]https://a.example/u",
        [("https://a.example/u", True)],
    ),
    ("stray close tag", "[/quote] https://a.example/s", [("https://a.example/s", False)]),
    ("QUOTE in capitals", "[QUOTE]https://a.example/c[/QUOTE]", [("https://a.example/c", True)]),
    (
        "markdown > line",
        "> https://a.example/md\nhttps://a.example/after",
        [("https://a.example/md", True), ("https://a.example/after", False)],
    ),
    (
        "trailing punctuation",
        "(https://a.example/p), https://a.example/q! https://a.example/r?",
        [
            ("https://a.example/p", False),
            ("https://a.example/q", False),
            ("https://a.example/r", False),
        ],
    ),
    (
        "balanced parentheses stay",
        "https://en.wikipedia.org/wiki/Foo_(bar) and [md](https://a.example/x_(y))",
        [("https://en.wikipedia.org/wiki/Foo_(bar)", False), ("https://a.example/x_(y)", False)],
    ),
    (
        "bbcode url tags",
        "[url=https://a.example/b]b[/url] [url]https://a.example/c[/url]",
        [("https://a.example/b", False), ("https://a.example/c", False)],
    ),
    ("forum's own links", "https://forum.example/t/x/1", []),
    ("scheme only", "http:// https://", []),
    ("duplicates", "https://a.example/d https://a.example/d", [("https://a.example/d", False)]),
]


@pytest.mark.parametrize(("name", "text", "expected"), TEXT_CASES, ids=[c[0] for c in TEXT_CASES])
def test_text_rules(name: str, text: str, expected: list[tuple[str, bool]]) -> None:
    assert [(x.url, x.in_quote) for x in extract_links_text(text, POST)] == expected


def test_text_context() -> None:
    text = "a" * 500 + " look https://a.example/x here " + "b" * 500
    [link] = extract_links_text(text, POST)
    assert "look https://a.example/x here" in link.context
    assert len(link.context) <= CONTEXT_CHARS
