"""Every ill-formed and encoding feed of ../shared/corpora/feeds (feedparser's test suite)
through the poller's parser: a list of usable items or a clear FeedError, never a crash."""

from __future__ import annotations

import contextlib
from collections import Counter
from pathlib import Path

import pytest

from services.poller.feed_fetch import FeedError, parse

FEED_URL = "http://forum.test/posts.rss"
REASONS = {"empty", "not_a_feed", "malformed"}


def feeds(corpora: Path) -> list[Path]:
    root = corpora / "feeds" / "feedparser"
    files = [p for sub in ("illformed", "encoding") for p in (root / sub).rglob("*") if p.is_file()]
    if not files:
        pytest.skip("no feed corpus")
    return sorted(files)


def test_every_hostile_feed_parses_or_fails_clearly(corpora: Path) -> None:
    outcomes: Counter[str] = Counter()
    for path in feeds(corpora):
        try:
            items = parse(path.read_bytes(), FEED_URL)
        except FeedError as exc:
            assert exc.reason in REASONS, (path.name, exc.reason)
            assert str(exc), path.name  # a message that says what is wrong
            outcomes[exc.reason] += 1
            continue
        for item in items:
            assert item.post_url.startswith(("http://", "https://")), (path.name, item.post_url)
            assert item.post_url != FEED_URL and item.guid, path.name
        outcomes["items" if items else "no_items"] += 1
    print(f"\nfeed corpus: {dict(outcomes)}")
    assert sum(outcomes.values()) >= 90


def test_the_whole_feed_corpus_never_crashes_the_parser(corpora: Path) -> None:
    root = corpora / "feeds" / "feedparser"
    n = 0
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        with contextlib.suppress(FeedError):
            parse(path.read_bytes(), FEED_URL)
        n += 1
    assert n > 600
