"""Canonicalisation rules (issue rules 2 and 4), table-driven."""

from __future__ import annotations

import pytest

from shared.links.canonical import CanonicalUrl, RejectedUrl, canonicalize
from shared.links.urlparts import (
    MAX_URL_LENGTH,
    parse,
    scrub_credentials,
    strip_credentials,
)

# (input, normalized, canonical)
NORMALIZE: list[tuple[str, str, str]] = [
    # host case, default ports, empty path, fragments
    ("HTTP://WWW.Example.COM", "http://www.example.com/", "http://www.example.com/"),
    ("http://example.com:80/a", "http://example.com/a", "http://example.com/a"),
    ("https://example.com:443/a", "https://example.com/a", "https://example.com/a"),
    ("http://example.com:8080/a", "http://example.com:8080/a", "http://example.com:8080/a"),
    ("http://example.com:/a", "http://example.com/a", "http://example.com/a"),
    ("https://example.com/a#section-2", "https://example.com/a", "https://example.com/a"),
    ("https://example.com/a#:~:text=foo", "https://example.com/a", "https://example.com/a"),
    # stateful fragments survive (hash routing, key=value state)
    (
        "https://app.example/#!/room/1",
        "https://app.example/#!/room/1",
        "https://app.example/#!/room/1",
    ),
    ("https://app.example/#/inbox", "https://app.example/#/inbox", "https://app.example/#/inbox"),
    (
        "https://excalidraw.com/#json=Sd,o9&utm_source=x",
        "https://excalidraw.com/#json=Sd,o9",
        "https://excalidraw.com/#json=Sd,o9",
    ),
    ("https://example.com/#utm_source=x", "https://example.com/", "https://example.com/"),
    # IDN -> punycode; homographs are distinct hosts
    ("http://www.Bücher.de/", "http://www.xn--bcher-kva.de/", "http://www.xn--bcher-kva.de/"),
    ("https://аpple.com/", "https://xn--pple-43d.com/", "https://xn--pple-43d.com/"),
    ("https://example。com/", "https://example.com/", "https://example.com/"),
    ("https://example.com./x", "https://example.com/x", "https://example.com/x"),
    # IP literals
    ("http://[::1]:8080/x", "http://[::1]:8080/x", "http://[::1]:8080/x"),
    ("http://[0:0::1]/", "http://[::1]/", "http://[::1]/"),
    ("http://127.0.0.1/", "http://127.0.0.1/", "http://127.0.0.1/"),
    # tracking parameters (ClearURLs), order of the rest kept
    (
        "https://example.com/a?z=1&utm_source=x&a=2&fbclid=y&gclid=z&m=3",
        "https://example.com/a?z=1&a=2&m=3",
        "https://example.com/a?z=1&a=2&m=3",
    ),
    ("https://example.com/a?utm_medium=x", "https://example.com/a", "https://example.com/a"),
    (
        "https://example.com/?a=1&&b=2&",
        "https://example.com/?a=1&b=2",
        "https://example.com/?a=1&b=2",
    ),
    ("https://example.com/?", "https://example.com/", "https://example.com/"),
    (
        "https://example.com/?flag&a=",
        "https://example.com/?flag&a=",
        "https://example.com/?flag&a=",
    ),
    # percent-encoding
    ("https://example.com/a%7eb%2fc", "https://example.com/a~b%2Fc", "https://example.com/a~b%2Fc"),
    ("https://example.com/a b", "https://example.com/a%20b", "https://example.com/a%20b"),
    (
        "https://example.com/é?q=é",
        "https://example.com/%C3%A9?q=%C3%A9",
        "https://example.com/%C3%A9?q=%C3%A9",
    ),
    ("https://example.com/?q=a+b", "https://example.com/?q=a+b", "https://example.com/?q=a+b"),
    # dot segments, backslashes, whitespace
    ("https://example.com/a/./b/../c", "https://example.com/a/c", "https://example.com/a/c"),
    ("https:\\\\example.com\\a\\b", "https://example.com/a/b", "https://example.com/a/b"),
    ("  https://example.com/a\n\tb  ", "https://example.com/ab", "https://example.com/ab"),
    # trailing slash rule: only an empty path becomes "/"
    ("https://example.com/dir/", "https://example.com/dir/", "https://example.com/dir/"),
    ("https://example.com/dir", "https://example.com/dir", "https://example.com/dir"),
    # https upgrade only for https-only hosts
    ("http://example.com/a", "http://example.com/a", "http://example.com/a"),
    ("http://github.com/a/b", "http://github.com/a/b", "https://github.com/a/b"),
    (
        "http://en.wikipedia.org/wiki/X",
        "http://en.wikipedia.org/wiki/X",
        "https://en.wikipedia.org/wiki/X",
    ),
    ("http://bsky.app/profile/a", "http://bsky.app/profile/a", "https://bsky.app/profile/a"),
    # extra slashes after the scheme are skipped, as browsers do
    ("http:///host/path", "http://host/path", "http://host/path"),
    # userinfo (credentials) always dropped, from the original form too
    ("http://u:p@example.com/", "http://example.com/", "http://example.com/"),
    ("https://user@example.com/x", "https://example.com/x", "https://example.com/x"),
    ("http://@example.com/", "http://example.com/", "http://example.com/"),
]


@pytest.mark.parametrize(("url", "normalized", "canonical"), NORMALIZE)
def test_normalization(url: str, normalized: str, canonical: str) -> None:
    c = canonicalize(url)
    assert isinstance(c, CanonicalUrl), c
    assert (c.original, c.normalized, c.canonical) == (
        strip_credentials(url),
        normalized,
        canonical,
    )
    again = canonicalize(c.canonical)
    assert isinstance(again, CanonicalUrl) and again.canonical == c.canonical


def test_domain_is_the_canonical_host() -> None:
    c = canonicalize("https://m.youtube.com/watch?v=HQD2cMVuNWk")
    assert isinstance(c, CanonicalUrl)
    assert c.domain == "www.youtube.com"


REJECT: list[tuple[object, str]] = [
    ("", "empty"),
    ("   ", "empty"),
    ("/relative/path", "relative-url"),
    ("//example.com/x", "relative-url"),
    ("example.com/x", "relative-url"),
    ("ftp://example.com/", "unsupported-scheme:ftp"),
    ("javascript:alert(1)", "unsupported-scheme:javascript"),
    ("mailto:a@b.example", "unsupported-scheme:mailto"),
    ("data:text/plain,hi", "unsupported-scheme:data"),
    ("file:///etc/passwd", "unsupported-scheme:file"),
    ("http://", "no-host"),
    ("https://:80/", "no-host"),
    ("http://exa mple.com/", "bad-host"),
    ("http://a..b.example/", "bad-host"),
    ("http://" + "a" * 64 + ".example/", "bad-host"),
    ("http://💩.la/", "bad-idn"),
    ("http://xn--zz.example/", "bad-idn"),
    ("http://example.com:99999/", "bad-port"),
    ("http://example.com:8o/", "bad-port"),
    ("http://[::1/", "bad-ipv6"),
    ("http://[zz::1]/", "bad-ipv6"),
    ("http://999.1.1.1/", "bad-ipv4"),
    ("https://example.com/%zz", "bad-percent-encoding"),
    ("https://example.com/100%", "bad-percent-encoding"),
    ("https://example.com/?q=%", "bad-percent-encoding"),
    ("https://exa%zzmple.com/", "bad-percent-encoding"),
    ("https://example.com/" + "a" * MAX_URL_LENGTH, "too-long"),
    ("https://example.com/\ud800", "bad-unicode"),
    (None, "not-a-string"),
    (b"https://example.com/", "not-a-string"),
]


@pytest.mark.parametrize(("url", "reason"), REJECT)
def test_rejections(url: object, reason: str) -> None:
    r = canonicalize(url)  # type: ignore[arg-type]
    assert isinstance(r, RejectedUrl), r
    assert r.reason == reason


def test_ten_kilobyte_url_is_rejected_quickly() -> None:
    r = canonicalize("https://example.com/?q=" + "x" * 10_240)
    assert isinstance(r, RejectedUrl) and r.reason == "too-long"


def test_url_that_grows_past_the_limit_when_encoded_is_rejected() -> None:
    # 1,500 'é' encode to 9,000 characters: the canonical form would exceed the limit
    r = canonicalize("https://example.com/" + "é" * 1500)
    assert isinstance(r, RejectedUrl) and r.reason == "too-long"


def test_query_order_is_kept_not_sorted() -> None:
    c = canonicalize("https://example.com/?b=2&a=1&c=3")
    assert isinstance(c, CanonicalUrl)
    assert c.canonical.endswith("?b=2&a=1&c=3")


def test_a_hash_a_rule_puts_in_a_query_value_does_not_end_the_query() -> None:
    parts = parse("https://example.com/a?x=1")
    moved = parts.replace(query=(("x", "1"), ("from_fragment", "#b?c=")))
    assert moved.without_fragment() == "https://example.com/a?x=1&from_fragment=%23b?c="
    again = canonicalize(moved.unsplit())
    assert isinstance(again, CanonicalUrl) and again.canonical == moved.unsplit()


def test_forms_are_all_kept() -> None:
    url = "http://WWW.Reddit.com/r/a/comments/b/c?utm_source=share#frag"
    c = canonicalize(url)
    assert isinstance(c, CanonicalUrl)
    assert c.original == url
    assert c.normalized == "http://www.reddit.com/r/a/comments/b/c"
    assert c.canonical == "https://old.reddit.com/r/a/comments/b/c/"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see https://bob:hunter2@host/x ok", "see https://host/x ok"),
        ('<a href="HTTP://u:p@h.com:8080/">', '<a href="HTTP://h.com:8080/">'),
        ("ftp://anon:pw&#64;files.example.org/", "ftp://files.example.org/"),
        ("https://a:b@c@d.example/", "https://d.example/"),
        ("https:\\\\u:p@h/", "https:\\\\h/"),
        (
            "mail bob@example.com, mailto:bob@example.com",
            "mail bob@example.com, mailto:bob@example.com",
        ),
        ("https://h.com/path@x?q=a@b#c@d", "https://h.com/path@x?q=a@b#c@d"),
    ],
)
def test_scrub_credentials_removes_every_urls_userinfo_from_text(text: str, expected: str) -> None:
    assert scrub_credentials(text) == expected
