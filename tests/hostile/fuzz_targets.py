"""Coverage-guided fuzz targets (atheris/libFuzzer) for what reads hostile input: link
extraction, canonicalisation and feed parsing. Each target checks invariants, not only
"no crash". Run one for a bounded time:

    python -m tests.hostile.fuzz_targets links -max_total_time=30 CORPUS_DIR

tests/hostile/test_fuzz.py runs each for FUZZ_SECONDS (5 in `make test`, 60 in `make chaos`).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

import atheris

with atheris.instrument_imports(include=["shared", "services"]):
    from services.poller.feed_fetch import FeedError, parse
    from shared.links.canonical import CanonicalUrl, canonicalize
    from shared.links.occurrences import occurrences_for_post

FEED_URL = "http://forum.test/posts.rss"


def links(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    base = fdp.ConsumeUnicodeNoSurrogates(40)
    html = fdp.ConsumeUnicodeNoSurrogates(len(data))
    for post_url in (base, "https://forum.test/t/x/1/2"):
        for o in occurrences_for_post(html, post_url, forum_hosts=["forum.test"]):
            assert o.canonical_url.startswith(("http://", "https://")), o
            again = canonicalize(o.canonical_url)
            assert isinstance(again, CanonicalUrl), (o.canonical_url, again)


def canonical(data: bytes) -> None:
    # the bytes as UTF-8 text, so the seeds are URLs as written (FuzzedDataProvider's
    # string reads its first byte as the encoding: every seed lost its "h" and was rejected
    # as no URL, and some 60 s runs never got past that)
    url = data.decode("utf-8", "replace")
    first = canonicalize(url)
    if isinstance(first, CanonicalUrl):
        second = canonicalize(first.canonical)
        assert isinstance(second, CanonicalUrl), (url, second)
        assert second.canonical == first.canonical, (url, first.canonical, second.canonical)


def feed(data: bytes) -> None:
    try:
        items = parse(data, FEED_URL)
    except FeedError as exc:
        assert exc.reason in {"empty", "not_a_feed", "malformed"}, exc.reason
        return
    for item in items:
        assert item.post_url.startswith(("http://", "https://")), item.post_url
        assert item.post_url != FEED_URL and item.guid


TARGETS: dict[str, Callable[[bytes], None]] = {"links": links, "canonical": canonical, "feed": feed}

SEEDS: dict[str, list[bytes]] = {
    "canonical": [
        b"https://www.reddit.com/r/a/comments/abc/title/?utm_source=x&context=3",
        b"http://youtu.be/dQw4w9WgXcQ?t=10",
        b"HTTPS://X.COM/user/status/1?s=20#frag",
        b"https://user:pw@[::1]:8080/a/../b?%41=1",
        b"http://xn--bcher-kva.example/%7Efoo",
    ],
    "links": [
        b'\x10https://forum<p><a href="https://x.com/a/status/1">x</a>'
        b"<aside class=quote><a href=https://redd.it/abc>q</a></aside>"
        b"[url=https://youtu.be/x]y[/url] https://bsky.app/profile/a/post/1</p>",
    ],
    "feed": [
        b'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
        b"<item><title>a</title><link>https://forum.test/t/a/1/1</link>"
        b'<guid isPermaLink="false">forum.test-post-1</guid>'
        b"<description><![CDATA[<a href='https://x.com/a'>x</a>]]></description></item>"
        b"</channel></rss>",
        b'<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>urn:1</id>'
        b'<link href="/t/x/2"/><content type="html">&lt;p&gt;hi</content></entry></feed>',
    ],
}
"""Starting inputs (libFuzzer mutates these; random bytes rarely look like a URL or a feed)."""


def main() -> None:
    logging.disable(logging.CRITICAL)
    target = TARGETS[sys.argv[1]]
    atheris.Setup([sys.argv[0], *sys.argv[2:]], target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
