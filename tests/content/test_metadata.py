"""extract_metadata and merge: precedence rules on hand-written pages."""

from __future__ import annotations

import json

from shared.content.metadata import PageMetadata, extract_metadata, looks_like_wall, merge

URL = "https://news.example/2024/story"


def page(head: str, body: str = "<p>x</p>", lang: str = "en") -> str:
    return f'<html lang="{lang}"><head>{head}</head><body>{body}</body></html>'


def test_meta_tags_and_links():
    html = page(
        '<title>Doc title - Site</title><meta property="og:title" content="OG title">'
        '<meta name="description" content="Desc"><meta property="og:site_name" content="Site">'
        '<meta name="author" content="Jane Doe"><link rel="canonical" href="/canon">'
        '<link rel="icon" href="/i.png"><meta property="og:image" content="https://i/x.jpg">'
        '<meta property="article:published_time" content="2024-03-01T10:00:00+01:00">'
    )
    m = extract_metadata(html, URL, find_dates=False)
    assert m == PageMetadata(
        title="OG title",
        description="Desc",
        author="Jane Doe",
        published_at="2024-03-01T10:00:00+01:00",
        site_name="Site",
        language="en",
        canonical_url="https://news.example/canon",
        favicon="https://news.example/i.png",
        image="https://i/x.jpg",
    )


def test_json_ld_headline_and_authors():
    ld = {
        "@context": "https://schema.org",
        "@graph": [
            {"@type": "WebSite", "name": "Site"},
            {
                "@type": "NewsArticle",
                "headline": "Real &amp; current headline",
                "author": [{"@type": "Person", "name": "A One"}, {"name": "B Two"}],
                "publisher": {"@type": "Organization", "name": "Pub"},
                "datePublished": "2023-05-06",
            },
        ],
    }
    html = page(
        '<title>Real current headline | Pub</title><meta property="og:title" content="Stale">'
        f'<script type="application/ld+json">{json.dumps(ld)}</script>'
    )
    m = extract_metadata(html, URL, find_dates=False)
    assert m.title == "Real & current headline"
    assert m.author == "A One, B Two"
    assert m.site_name == "Pub"
    assert m.published_at == "2023-05-06"


def test_not_authors_are_skipped():
    html = page(
        '<meta property="og:site_name" content="The Paper">'
        '<meta name="author" content="The Paper"><meta property="article:author" '
        'content="https://facebook.com/someone">',
        '<p class="byline">By Jo Writer</p>',
    )
    assert extract_metadata(html, URL, find_dates=False).author == "Jo Writer"


def test_a_profile_url_is_not_an_author_even_as_words():
    html = page(
        '<meta name="author" content="www.facebook.com/janewrites">',
        '<p class="byline">By Jane Writer</p><p>Some text of the article.</p>',
    )
    assert extract_metadata(html, URL).author == "Jane Writer"


def test_space_separated_properties_and_dublin_core_first():
    html = page(
        '<title>T</title><meta property="og:title twitter:title" content="Shared">'
        '<meta property="dc:title" content="DC title">'
    )
    assert extract_metadata(html, URL, find_dates=False).title == "DC title"
    html = page('<title>T</title><meta property="og:title twitter:title" content="Shared">')
    assert extract_metadata(html, URL, find_dates=False).title == "Shared"


def test_platform_author_and_reddit_wrapper():
    x = page('<meta property="og:title" content="Jane (@jane) on X: &quot;hi&quot;">')
    assert extract_metadata(x, "https://x.com/jane/status/1", find_dates=False).author == "Jane"
    r = page('<meta property="og:title" content="From the lotus community on Reddit: My car">')
    assert extract_metadata(r, "https://www.reddit.com/r/lotus/", find_dates=False).title == (
        "My car"
    )


def test_posts_on_x_and_tiktok_are_titled_name_handle_platform():
    def title(og_title: str, url: str) -> str | None:
        html = page(f'<meta property="og:title" content="{og_title}">')
        return extract_metadata(html, url, find_dates=False).title

    post = "https://x.com/jane_d/status/123"
    assert title("Jane Doe on X: &quot;a long post&quot; / X", post) == "Jane Doe (@jane_d) on X"
    assert title("Jane Doe (@jane_d) on X", post) == "Jane Doe (@jane_d) on X"
    assert title("Jane Doe (@jane_d) / X", "https://x.com/jane_d") == "Jane Doe (@jane_d) on X"
    assert title("Jo on TikTok", "https://www.tiktok.com/@jo.jo/video/7") == "Jo (@jo.jo) on TikTok"
    # not a post title (a wall, a search page) or not a post URL: left as it is
    assert title("Log in to X / X", post) == "Log in to X / X"
    assert title("Search / X", "https://x.com/search") == "Search / X"
    assert title("Jane Doe on X: &quot;hi&quot; / X", "https://x.com/home") == (
        'Jane Doe on X: "hi" / X'
    )
    assert title("Jo on TikTok", "https://example.com/@jo/video/7") == "Jo on TikTok"


def test_page_links_are_http_urls_only():
    html = page(
        '<link rel="canonical" href="javascript:alert(1)"><link rel="icon" href="data:x">'
        '<meta property="og:image" content="/img/a.png">'
    )
    m = extract_metadata(html, URL, find_dates=False)
    assert m.canonical_url is None
    assert m.favicon == "https://news.example/favicon.ico"
    assert m.image == "https://news.example/img/a.png"


def test_no_html_gives_empty_metadata():
    assert extract_metadata("", URL) == PageMetadata()
    assert extract_metadata("   ", URL).as_dict() == {}


def test_merge_prefers_rendered_unless_it_is_a_wall():
    raw = PageMetadata(title="Article", author="A", description="raw desc")
    rendered = PageMetadata(title="Article (updated)", language="en")
    merged = merge(raw, rendered)
    assert merged.title == "Article (updated)"
    assert merged.author == "A" and merged.language == "en" and merged.description == "raw desc"
    wall = PageMetadata(title="Log in to continue", description="Sign in")
    assert looks_like_wall(wall)
    assert merge(raw, wall).title == "Article"
    assert merge(raw, wall).description == "raw desc"


def test_merge_keeps_the_raw_spelling_of_text_the_browser_misread_as_windows_1252():
    # a UTF-8 page that declares no charset: Chromium reads its bytes as windows-1252, the
    # raw decoder as UTF-8 (the title went "GrÃ¼ÃŸe aus KÃ¶ln" through dla up)
    raw = PageMetadata(title="Grüße aus Köln", site_name="Café Zoë")
    misread = "Grüße aus Köln".encode().decode("cp1252")
    rendered = PageMetadata(title=misread, site_name="Café Zoë", language="de")
    merged = merge(raw, rendered)
    assert (merged.title, merged.site_name, merged.language) == (
        "Grüße aus Köln", "Café Zoë", "de")  # fmt: skip
    # a rendered title that only differs stays the rendered one
    assert merge(raw, PageMetadata(title="Grüße aus Bonn")).title == "Grüße aus Bonn"
