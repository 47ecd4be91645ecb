"""Site rules, one table per rule: (input, canonical, needs_resolve)."""

from __future__ import annotations

import pytest

from shared.links.canonical import CanonicalUrl, canonicalize
from shared.links.sites import RULES, rule_for

Row = tuple[str, str, bool]


def check(url: str, canonical: str, needs_resolve: bool) -> None:
    c = canonicalize(url)
    assert isinstance(c, CanonicalUrl), c
    assert (c.canonical, c.needs_resolve) == (canonical, needs_resolve)
    again = canonicalize(c.canonical)
    assert isinstance(again, CanonicalUrl)
    assert (again.canonical, again.needs_resolve) == (canonical, needs_resolve)


REDDIT: list[Row] = [
    (
        "https://www.reddit.com/r/TwoXChromosomes/comments/1q98p8v/comment/nyvkjv5/",
        "https://old.reddit.com/r/TwoXChromosomes/comments/1q98p8v/comment/nyvkjv5/",
        False,
    ),
    (
        "https://reddit.com/r/a/comments/abc/title/def/?context=3&utm_source=share&utm_medium=ios_app",
        "https://old.reddit.com/r/a/comments/abc/title/def/?context=3",
        False,
    ),
    ("http://m.reddit.com/r/a/comments/abc/t", "https://old.reddit.com/r/a/comments/abc/t/", False),
    ("https://np.reddit.com/r/a/comments/abc/", "https://old.reddit.com/r/a/comments/abc/", False),
    ("https://new.reddit.com/r/a/", "https://old.reddit.com/r/a/", False),
    (
        "https://old.reddit.com/r/a/comments/abc/t/",
        "https://old.reddit.com/r/a/comments/abc/t/",
        False,
    ),
    ("https://www.reddit.com/user/bob", "https://old.reddit.com/user/bob/", False),
    (
        "https://www.reddit.com/r/a/comments/abc/t.json",
        "https://old.reddit.com/r/a/comments/abc/t.json",
        False,
    ),
    (
        "https://www.reddit.com/r/a/comments/abc/t/?share_id=X&rdt=1",
        "https://old.reddit.com/r/a/comments/abc/t/",
        False,
    ),
    ("https://www.reddit.com/r/sub/s/AbC123xyz", "https://www.reddit.com/r/sub/s/AbC123xyz", True),
    ("https://reddit.com/r/sub/s/AbC123xyz/", "https://www.reddit.com/r/sub/s/AbC123xyz/", True),
    ("https://redd.it/1q98p8v", "https://redd.it/1q98p8v", True),
    ("http://redd.it/1q98p8v/", "https://redd.it/1q98p8v", True),
    ("https://i.redd.it/abc.jpg", "https://i.redd.it/abc.jpg", False),
    ("https://v.redd.it/abc", "https://v.redd.it/abc", False),
    (
        "https://out.reddit.com/t3_x?url=https%3A%2F%2Fexample.com%2Fa&token=1",
        "https://example.com/a",
        False,
    ),
]

YOUTUBE: list[Row] = [
    ("https://youtu.be/HQD2cMVuNWk", "https://www.youtube.com/watch?v=HQD2cMVuNWk", False),
    (
        "https://youtu.be/HQD2cMVuNWk?si=abc&t=42",
        "https://www.youtube.com/watch?v=HQD2cMVuNWk&t=42",
        False,
    ),
    (
        "https://www.youtube.com/shorts/HQD2cMVuNWk",
        "https://www.youtube.com/watch?v=HQD2cMVuNWk",
        False,
    ),
    (
        "https://m.youtube.com/watch?v=HQD2cMVuNWk&feature=share",
        "https://www.youtube.com/watch?v=HQD2cMVuNWk",
        False,
    ),
    (
        "https://youtube.com/embed/HQD2cMVuNWk?start=90",
        "https://www.youtube.com/watch?v=HQD2cMVuNWk&t=90",
        False,
    ),
    (
        "https://www.youtube-nocookie.com/embed/HQD2cMVuNWk",
        "https://www.youtube.com/watch?v=HQD2cMVuNWk",
        False,
    ),
    (
        "https://www.youtube.com/live/HQD2cMVuNWk?si=x",
        "https://www.youtube.com/watch?v=HQD2cMVuNWk",
        False,
    ),
    (
        "https://www.youtube.com/watch?list=PL1&v=HQD2cMVuNWk&index=3&t=1m2s",
        "https://www.youtube.com/watch?v=HQD2cMVuNWk&t=1m2s",
        False,
    ),
    (
        "https://www.youtube.com/watch?v=HQD2cMVuNWk#t=30",
        "https://www.youtube.com/watch?v=HQD2cMVuNWk&t=30",
        False,
    ),
    # a start that is no time is dropped (YouTube ignores it: the same video); found by the
    # fuzzer, whose input kept "#cQ?=" as a start that ended the URL's query
    (
        "http://youtu.be/dQW4w9WgXtQ?u.be/dQW4w9WgXtQ?t=#t=#cQ?=",
        "https://www.youtube.com/watch?v=dQW4w9WgXtQ",
        False,
    ),
    ("https://youtu.be/HQD2cMVuNWk?t=abc", "https://www.youtube.com/watch?v=HQD2cMVuNWk", False),
    (
        "https://youtu.be/HQD2cMVuNWk?t=1h2m3s",
        "https://www.youtube.com/watch?v=HQD2cMVuNWk&t=1h2m3s",
        False,
    ),
    (
        "http://www.youtube.com/watch?v=HQD2cMVuNWk",
        "https://www.youtube.com/watch?v=HQD2cMVuNWk",
        False,
    ),
    ("https://m.youtube.com/@channel", "https://www.youtube.com/@channel", False),
    (
        "https://www.youtube.com/playlist?list=PL1",
        "https://www.youtube.com/playlist?list=PL1",
        False,
    ),
    # not a valid video id: host normalised, nothing invented
    ("https://www.youtube.com/watch?v=short", "https://www.youtube.com/watch?v=short", False),
    (
        "https://youtube.com/redirect?q=https%3A%2F%2Fexample.com%2F&event=x",
        "https://example.com/",
        False,
    ),
]

X: list[Row] = [
    ("https://twitter.com/jack/status/20", "https://x.com/jack/status/20", False),
    ("https://mobile.twitter.com/jack/status/20?s=20&t=abc", "https://x.com/jack/status/20", False),
    ("https://www.x.com/jack/status/20", "https://x.com/jack/status/20", False),
    ("http://x.com/jack", "https://x.com/jack", False),
    ("https://fxtwitter.com/jack/status/20", "https://x.com/jack/status/20", False),
    ("https://vxtwitter.com/jack/status/20?ref_src=twsrc", "https://x.com/jack/status/20", False),
    ("https://t.co/abc123", "https://t.co/abc123", True),
    ("https://pbs.twimg.com/media/a.jpg", "https://pbs.twimg.com/media/a.jpg", False),
]

OTHERS: list[Row] = [
    ("https://instagram.com/p/ABC123/?igsh=xyz", "https://www.instagram.com/p/ABC123/", False),
    ("http://instagr.am/p/ABC123", "https://www.instagram.com/p/ABC123/", False),
    (
        "https://www.instagram.com/reel/ABC123?igshid=1",
        "https://www.instagram.com/reel/ABC123/",
        False,
    ),
    ("https://www.instagram.com/someone", "https://www.instagram.com/someone", False),
    (
        "https://m.tiktok.com/@u/video/7583988830068313366?is_from_webapp=1&sender_device=pc",
        "https://www.tiktok.com/@u/video/7583988830068313366",
        False,
    ),
    ("https://vm.tiktok.com/ZMabc123/", "https://vm.tiktok.com/ZMabc123/", True),
    ("https://www.tiktok.com/t/ZTabc123/", "https://www.tiktok.com/t/ZTabc123/", True),
    (
        "https://m.facebook.com/story.php?story_fbid=1&id=2&mibextid=x",
        "https://www.facebook.com/story.php?story_fbid=1&id=2",
        False,
    ),
    ("https://fb.watch/abcDEF/", "https://fb.watch/abcDEF/", True),
    (
        "https://l.facebook.com/l.php?u=https%3A%2F%2Fexample.com%2Fx&h=AT0",
        "https://example.com/x",
        False,
    ),
    (
        "https://bsky.app/profile/a.bsky.social/post/3k",
        "https://bsky.app/profile/a.bsky.social/post/3k",
        False,
    ),
    ("https://bit.ly/3abcDEF", "https://bit.ly/3abcDEF", True),
    ("https://bit.ly/", "https://bit.ly/", False),
    ("https://www.google.com/amp/s/www.example.com/a", "https://www.example.com/a", False),
    (
        "https://www.google.co.uk/url?q=https://youtu.be/HQD2cMVuNWk&sa=D",
        "https://www.youtube.com/watch?v=HQD2cMVuNWk",
        False,
    ),
    (
        "https://www.google.com/url?q=javascript:alert(1)",
        "https://www.google.com/url?q=javascript:alert(1)",
        False,
    ),
    ("https://www.google.com/search?q=x&ved=1", "https://www.google.com/search?q=x", False),
    ("https://abc.cdn.ampproject.org/c/s/www.example.com/a", "https://www.example.com/a", False),
]


@pytest.mark.parametrize(("url", "canonical", "needs_resolve"), REDDIT)
def test_reddit(url: str, canonical: str, needs_resolve: bool) -> None:
    check(url, canonical, needs_resolve)


@pytest.mark.parametrize(("url", "canonical", "needs_resolve"), YOUTUBE)
def test_youtube(url: str, canonical: str, needs_resolve: bool) -> None:
    check(url, canonical, needs_resolve)


@pytest.mark.parametrize(("url", "canonical", "needs_resolve"), X)
def test_x(url: str, canonical: str, needs_resolve: bool) -> None:
    check(url, canonical, needs_resolve)


@pytest.mark.parametrize(("url", "canonical", "needs_resolve"), OTHERS)
def test_other_sites(url: str, canonical: str, needs_resolve: bool) -> None:
    check(url, canonical, needs_resolve)


def test_short_link_resolution_then_recanonicalisation() -> None:
    """The worker's flow: resolve the short link, canonicalize the final URL again."""
    first = canonicalize("https://www.reddit.com/r/sub/s/AbC123xyz")
    assert isinstance(first, CanonicalUrl) and first.needs_resolve
    final = canonicalize(
        "https://www.reddit.com/r/sub/comments/1abc/title/?share_id=z&utm_source=share"
    )
    assert isinstance(final, CanonicalUrl) and not final.needs_resolve
    assert final.canonical == "https://old.reddit.com/r/sub/comments/1abc/title/"


def test_rules_are_looked_up_by_registrable_domain() -> None:
    assert rule_for("old.reddit.com") is RULES["reddit.com"]
    assert rule_for("www.google.de") is not None
    assert rule_for("example.com") is None
