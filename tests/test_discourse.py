"""Which forum a URL is on, and which topic a pasted URL names."""

from __future__ import annotations

import pytest

from shared.discourse import NotATopic, TopicRef, forum_of, parse_topic_url


@pytest.mark.parametrize(
    ("url", "forum"),
    [
        ("https://Discuss.Example.com/t/a/1/2", "discuss.example.com"),
        ("https://discuss.example.com:443/t/a/1", "discuss.example.com"),
        ("http://127.0.0.1:8080/posts.rss", "127.0.0.1:8080"),
        ("http://[::1]:9000/t/a/1", "[::1]:9000"),
        ("https://user:pw@forum.test/t/a/1", "forum.test"),
        ("not a url", ""),
        ("http://[broken/t/1", ""),
    ],
)
def test_the_forum_of_a_url(url: str, forum: str) -> None:
    assert forum_of(url) == forum


@pytest.mark.parametrize(
    ("url", "topic"),
    [
        ("https://forum.test/t/some-slug/123", TopicRef("https://forum.test", 123)),
        ("https://forum.test/t/some-slug/123/45", TopicRef("https://forum.test", 123)),
        ("https://forum.test/t/123", TopicRef("https://forum.test", 123)),
        ("https://forum.test/t/123/45", TopicRef("https://forum.test", 123)),
        ("https://forum.test/t/some-slug/123.json", TopicRef("https://forum.test", 123)),
        ("https://forum.test/t/some-slug/123/?u=bob#post_4", TopicRef("https://forum.test", 123)),
        (" HTTPS://Forum.test:8443/t/x/9 ", TopicRef("https://Forum.test:8443", 9)),
        ("https://example.com/forum/t/slug/7/2", TopicRef("https://example.com/forum", 7)),
    ],
)
def test_topic_urls_as_people_paste_them(url: str, topic: TopicRef) -> None:
    assert parse_topic_url(url) == topic


@pytest.mark.parametrize(
    "url",
    [
        "https://forum.test/c/general/4",
        "https://forum.test/t/slug-only",
        "https://forum.test/t/slug/notanumber",
        "https://forum.test/t/slug/1/2/3",
        "https://forum.test/u/bob",
        "ftp://forum.test/t/slug/1",
        "/t/slug/1",
        "http://[broken/t/1",
        "",
    ],
)
def test_anything_else_is_not_a_topic(url: str) -> None:
    with pytest.raises(NotATopic):
        parse_topic_url(url)
