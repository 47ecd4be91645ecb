"""Domain policy (issue rule 3) and the per-post pipeline."""

from __future__ import annotations

import logging

import pytest

from shared.links.canonical import CanonicalUrl, canonicalize
from shared.links.domains import registrable_domain
from shared.links.occurrences import analyze_post, occurrences_for_post
from shared.links.policy import DomainPolicy
from shared.messages import LinkOccurrence

DEFAULT = DomainPolicy()
ALL = DomainPolicy(mode="all")
POST = "https://forum.example/t/x/1/2"


def decide(policy: DomainPolicy, url: str) -> tuple[str, str]:
    c = canonicalize(url)
    assert isinstance(c, CanonicalUrl), c
    return policy.decide(c)


@pytest.mark.parametrize(
    ("host", "registrable"),
    [
        ("old.reddit.com", "reddit.com"),
        ("reddit.com", "reddit.com"),
        ("a.b.bbc.co.uk", "bbc.co.uk"),
        ("co.uk", "co.uk"),
        ("web.archive.org", "archive.org"),
        ("user.github.io", "github.io"),  # private PSL section not used
        ("localhost", "localhost"),
        ("127.0.0.1", "127.0.0.1"),
        ("[::1]", "[::1]"),
        ("Old.Reddit.COM.", "reddit.com"),
        ("", ""),
    ],
)
def test_registrable_domain(host: str, registrable: str) -> None:
    assert registrable_domain(host) == registrable


DELETABLE_CASES = [
    ("https://old.reddit.com/r/a/comments/b/", "archive", "allowlist:reddit.com"),
    ("https://www.reddit.com/r/a/", "archive", "allowlist:reddit.com"),
    ("https://redd.it/abc", "archive", "allowlist:redd.it"),
    ("https://youtu.be/HQD2cMVuNWk", "archive", "allowlist:youtube.com"),
    ("https://twitter.com/a/status/1", "archive", "allowlist:x.com"),
    ("https://www.tiktok.com/@a/video/1", "archive", "allowlist:tiktok.com"),
    ("https://m.facebook.com/a", "archive", "allowlist:facebook.com"),
    ("https://bsky.app/profile/a", "archive", "allowlist:bsky.app"),
    ("https://example.com/a", "skip", "not-deletable"),
    ("https://notreddit.com/a", "skip", "not-deletable"),
    ("https://reddit.com.evil.example/a", "skip", "not-deletable"),
    ("https://web.archive.org/web/2020/https://reddit.com/r/a", "skip", "excluded:web.archive.org"),
    ("https://archive.org/details/x", "skip", "excluded:archive.org"),
    ("https://archive.ph/abc", "skip", "excluded:archive.ph"),
    ("https://archive.today/abc", "skip", "excluded:archive.today"),
    ("https://archive.is/abc", "skip", "excluded:archive.is"),
    ("https://bit.ly/abc", "archive", "resolve-first:bit.ly"),
]


@pytest.mark.parametrize(("url", "decision", "reason"), DELETABLE_CASES)
def test_deletable_mode(url: str, decision: str, reason: str) -> None:
    assert decide(DEFAULT, url) == (decision, reason)


@pytest.mark.parametrize(
    ("url", "decision", "reason"),
    [
        ("https://example.com/a", "archive", "mode:all"),
        ("https://old.reddit.com/r/a/", "archive", "mode:all"),
        ("https://web.archive.org/web/1/x", "skip", "excluded:web.archive.org"),
    ],
)
def test_all_mode(url: str, decision: str, reason: str) -> None:
    assert decide(ALL, url) == (decision, reason)


def test_exclusion_wins_over_allowlist() -> None:
    policy = DomainPolicy(
        allowlist=frozenset({"reddit.com"}), exclude=frozenset({"old.reddit.com"})
    )
    assert decide(policy, "https://reddit.com/r/a/") == ("skip", "excluded:old.reddit.com")


def test_entries_are_normalised() -> None:
    policy = DomainPolicy(allowlist=frozenset({" Reddit.COM. ", "*.example.org", "bücher.de"}))
    assert policy.allowlist == frozenset({"reddit.com", "example.org", "xn--bcher-kva.de"})
    assert decide(policy, "https://www.bücher.de/x")[0] == "archive"


def test_public_suffix_entry_does_not_match_everything() -> None:
    policy = DomainPolicy(allowlist=frozenset({"co.uk"}))
    assert decide(policy, "https://www.bbc.co.uk/news") == ("skip", "not-deletable")


def test_non_http_scheme_is_skipped() -> None:
    fake = CanonicalUrl("ftp://a/", "ftp://a/", "ftp://a/", "a", False)
    assert ALL.decide(fake) == ("skip", "scheme:ftp")


def test_bad_mode_is_refused() -> None:
    with pytest.raises(ValueError):
        DomainPolicy(mode="some")  # type: ignore[arg-type]


COOKED = (
    "<p>Look <a href='https://www.reddit.com/r/a/comments/b/c/?utm_source=share'>this</a> "
    "and <a href='https://youtu.be/HQD2cMVuNWk?t=5'>that</a> and "
    "<a href='https://youtube.com/watch?v=HQD2cMVuNWk&t=5'>the same video</a>.</p>"
    "<blockquote><a href='https://example.com/q'>q</a></blockquote>"
    "<p><a class='mention' href='/u/bob'>@bob</a> <a href='http://exa%zzmple.com/'>bad</a> "
    "<a href='https://forum.example/t/y/3'>own topic</a></p>"
)


def test_occurrences_for_post() -> None:
    occ = occurrences_for_post(COOKED, POST, forum_hosts=["forum.example"])
    assert all(isinstance(o, LinkOccurrence) for o in occ)
    assert [(o.canonical_url, o.in_quote) for o in occ] == [
        ("https://old.reddit.com/r/a/comments/b/c/", False),
        ("https://www.youtube.com/watch?v=HQD2cMVuNWk&t=5", False),
        ("https://example.com/q", True),
    ]
    decided = [
        DEFAULT.decide(c)
        for o in occ
        if isinstance(c := canonicalize(o.canonical_url), CanonicalUrl)
    ]
    assert decided == [
        ("archive", "allowlist:reddit.com"),
        ("archive", "allowlist:youtube.com"),
        ("skip", "not-deletable"),
    ]
    first = occ[0]
    assert first.original_url == "https://www.reddit.com/r/a/comments/b/c/?utm_source=share"
    assert first.normalized_url == "https://www.reddit.com/r/a/comments/b/c/"
    assert first.domain == "old.reddit.com"
    assert "Look this and that" in first.context_snippet


def test_rejected_urls_are_reported(caplog: pytest.LogCaptureFixture) -> None:
    result = analyze_post(COOKED, POST)
    assert [(r.original, r.reason) for r in result.rejected] == [
        ("http://exa%zzmple.com/", "bad-percent-encoding")
    ]
    with caplog.at_level(logging.WARNING, logger="shared.links"):
        occurrences_for_post(COOKED, POST)
    assert "1 link(s) rejected" in caplog.text
    assert "bad-percent-encoding" in caplog.text


def test_plain_text_post_uses_the_text_rules() -> None:
    text = "[quote]https://redd.it/abc[/quote]\nsee https://x.com/a/status/1"
    occ = occurrences_for_post(text, POST)
    assert [(o.canonical_url, o.in_quote, o.needs_resolve) for o in occ] == [
        ("https://redd.it/abc", True, True),
        ("https://x.com/a/status/1", False, False),
    ]


def test_same_link_in_and_out_of_quote_gives_two_occurrences() -> None:
    html = (
        "<p><a href='https://x.com/a/status/1'>a</a></p>"
        "<blockquote><a href='https://twitter.com/a/status/1'>b</a></blockquote>"
    )
    occ = occurrences_for_post(html, POST)
    assert [(o.canonical_url, o.in_quote) for o in occ] == [
        ("https://x.com/a/status/1", False),
        ("https://x.com/a/status/1", True),
    ]
