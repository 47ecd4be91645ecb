"""Property tests: nothing raises, canonical forms are fixed points."""

from __future__ import annotations

import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.links.canonical import CanonicalUrl, RejectedUrl, canonicalize
from shared.links.link_extract import extract_links, extract_links_text
from shared.links.occurrences import occurrences_for_post

FAST = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

URL_CHARS = st.sampled_from(
    [
        *(string.ascii_letters + string.digits + "-._~:/?#[]@!$&'()*+,;=% \t\\\"<>`{}|^"),
        *["é", "日", "а", "ß", "\u200b", "\x00", "%2e", "%zz", "%41", "/..", "/./", "#!", "&&"],
    ]
)
HOSTS = st.sampled_from(
    [
        "example.com",
        "EXAMPLE.com.",
        "www.reddit.com",
        "redd.it",
        "youtu.be",
        "m.youtube.com",
        "twitter.com",
        "bücher.de",
        "[::1]",
        "127.0.0.1",
        "www.google.co.uk",
        "x.cdn.ampproject.org",
        "out.reddit.com",
        "instagram.com",
        "vm.tiktok.com",
        "bit.ly",
        "l.facebook.com",
        "xn--bcher-kva.de",
        "u:p@example.org",
        "",
    ]
)
URLISH = st.builds(
    lambda scheme, host, port, rest: f"{scheme}{host}{port}{rest}",
    st.sampled_from(["http://", "https://", "HTTPS://", "http:", "ftp://", "https:\\\\", ""]),
    HOSTS,
    st.sampled_from(["", ":80", ":443", ":8080", ":", ":99999"]),
    st.lists(URL_CHARS, max_size=30).map("".join),
)
ANY_TEXT = st.one_of(URLISH, st.text(max_size=80))


@FAST
@given(ANY_TEXT)
def test_canonicalize_never_raises_and_is_idempotent(url: str) -> None:
    c = canonicalize(url)
    assert isinstance(c, CanonicalUrl | RejectedUrl)
    if isinstance(c, RejectedUrl):
        assert c.reason and not c.reason.startswith("internal-error"), c
        return
    again = canonicalize(c.canonical)
    assert isinstance(again, CanonicalUrl), (url, c, again)
    assert again.canonical == c.canonical
    assert again.needs_resolve == c.needs_resolve
    assert c.canonical.startswith(("http://", "https://"))
    normal = canonicalize(c.normalized)
    assert isinstance(normal, CanonicalUrl)
    assert normal.normalized == c.normalized


@FAST
@given(st.from_type(object))
def test_canonicalize_takes_anything(value: object) -> None:
    assert isinstance(canonicalize(value), CanonicalUrl | RejectedUrl)  # type: ignore[arg-type]


TAGS = st.sampled_from(
    [
        "<a href='{u}'>",
        "</a>",
        "<blockquote>",
        "</blockquote>",
        "<aside class='quote'>",
        "<aside class='onebox' data-onebox-src='{u}'>",
        "</aside>",
        "<div class='lightbox-wrapper'>",
        "</div>",
        "<p>",
        "<a class='mention' href='/u/x'>",
        "[quote]",
        "[/quote]",
        "<!--",
        "<![CDATA[",
        "<script>",
        "<a href=",
        "&amp;",
        " ",
        "text",
    ]
)
HTMLISH = st.lists(st.tuples(TAGS, URLISH), max_size=25).map(
    lambda parts: "".join(t.replace("{u}", u.replace("'", "")) for t, u in parts)
)


@FAST
@given(st.one_of(HTMLISH, st.text(max_size=200)), st.one_of(URLISH, st.text(max_size=30)))
def test_extraction_never_raises(html: str, base: str) -> None:
    for link in extract_links(html, base):
        assert link.url.lower().startswith(("http://", "https://"))
        assert len(link.context) <= 210
    extract_links_text(html, base)
    for occ in occurrences_for_post(html, base):
        assert occ.canonical_url.lower().startswith(("http://", "https://"))
