"""shared.platforms.reddit_thread: page verdicts, URLs, and the thread parser on PRAW's
recordings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.platforms.reddit_thread import (
    NotAThread,
    classify_page,
    is_reddit,
    on_host,
    parse_thread,
    thread_html,
    thread_metadata,
    thread_path,
)

LINK = "https://www.reddit.com/r/python/comments/abc123/some_title/?utm_source=share"


def test_links_and_hosts():
    assert is_reddit(LINK) and is_reddit("https://redd.it/abc") and is_reddit("http://reddit.com")
    assert not is_reddit("https://notreddit.com/r/x") and not is_reddit("https://example.org")
    assert thread_path(LINK) == "/r/python/comments/abc123/some_title/"
    assert thread_path("https://old.reddit.com/comments/abc123") == "/comments/abc123/"
    assert thread_path("https://www.reddit.com/r/python/") is None
    assert on_host("https://old.reddit.com", LINK) == (
        "https://old.reddit.com/r/python/comments/abc123/some_title/?utm_source=share"
    )
    assert on_host("http://127.0.0.1:9/pre", LINK, json_suffix=True) == (
        "http://127.0.0.1:9/pre/r/python/comments/abc123/some_title/.json?raw_json=1"
    )


@pytest.mark.parametrize(
    ("status", "final_url", "body", "verdict"),
    [
        (
            200,
            "https://old.reddit.com/r/a/comments/x/y/",
            "<html><a href='/r/a/comments/x/'>",
            "ok",
        ),
        (403, "https://old.reddit.com/r/a/", "whatever", "blocked"),
        (429, "https://old.reddit.com/r/a/", "", "rate_limited"),
        (200, "https://old.reddit.com/r/a/", "<h1>whoa there, pardner!</h1>", "blocked"),
        (200, "https://www.reddit.com/login/?dest=x", "<form>", "login"),
        (200, "https://old.reddit.com/r/a/", "<title>reddit - Log in</title>", "login"),
        (200, "https://old.reddit.com/over18?dest=x", "<p>are you over eighteen</p>", "over18"),
        (200, "https://old.reddit.com/r/nsfw/", "You must be 18+ to view this community", "over18"),
        (404, "https://old.reddit.com/r/a/comments/zz/", "<p>page not found</p>", "not_found"),
        (503, "https://old.reddit.com/r/a/", "<p>down</p>", "error"),
    ],
)
def test_page_verdicts(status, final_url, body, verdict):
    assert classify_page(status, final_url, body) == verdict


SMALL = [
    {"kind": "Listing", "data": {"children": [{"kind": "t3", "data": {
        "title": "A <b> title", "author": "op", "subreddit": "test", "created_utc": 1700000000.0,
        "permalink": "/r/test/comments/abc123/a_title/", "url": "https://example.org/x",
        "selftext": "First para.\n\nSecond para.", "over_18": False}}]}},
    {"kind": "Listing", "data": {"children": [
        {"kind": "t1", "data": {"author": "alice", "body_html": "<div class=\"md\"><p>Hi</p></div>",
         "created_utc": 1700000100.0, "score": 3, "replies": {"kind": "Listing", "data": {
             "children": [{"kind": "t1", "data": {"author": "bob", "body": "Reply", "replies": ""}},
                          {"kind": "more", "data": {"count": 4, "children": ["a"]}}]}}}},
        {"kind": "more", "data": {"count": 10, "children": ["b", "c"]}}]}},
]  # fmt: skip


def test_parse_a_small_thread():
    thread = parse_thread(SMALL)
    assert thread.title == "A <b> title" and thread.author == "op" and thread.subreddit == "r/test"
    assert [c.author for c in thread.comments] == ["alice"]
    assert [c.author for c in thread.comments[0].replies] == ["bob"]
    assert thread.comments[0].replies[0].body_html == "<p>Reply</p>"
    assert thread.more == 14
    html = thread_html(thread)
    assert "<h1>A &lt;b&gt; title</h1>" in html and "u/alice" in html and "u/bob" in html
    assert "<p>First para.</p><p>Second para.</p>" in html and "14 more comments" in html
    meta = thread_metadata(thread)
    assert meta.title == "A <b> title" and meta.author == "op" and meta.site_name == "r/test"
    assert meta.published_at == "2023-11-14T22:13:20Z"
    assert meta.description == "First para. Second para."
    assert meta.canonical_url == "https://old.reddit.com/r/test/comments/abc123/a_title/"


@pytest.mark.parametrize("bad", [{}, [], [{"data": {"children": []}}], "x", [{"data": {
    "children": [{"kind": "t1", "data": {}}]}}]])  # fmt: skip
def test_not_a_thread(bad):
    with pytest.raises(NotAThread):
        parse_thread(bad)


def test_praw_recordings(corpora: Path):
    folder = corpora / "platforms" / "reddit" / "json"
    index = json.loads((folder / "index.json").read_text())
    seen = 0
    for entry in index["files"]:
        data = json.loads((folder / entry["file"]).read_text())
        thread = parse_thread(data)
        post = data[0]["data"]["children"][0]["data"]
        assert thread.title == post["title"]
        assert thread.author == post["author"]
        top = [c for c in data[1]["data"]["children"] if c["kind"] == "t1"]
        assert len(thread.comments) == len(top)
        html = thread_html(thread)
        for comment in top[:5]:
            assert f"u/{comment['data']['author']}" in html
        seen += 1
    assert seen >= 8
    full = parse_thread(json.loads((folder / "3hahrw_thread_full.json").read_text()))
    assert full.subreddit == "r/funny" and full.more > 0
    assert any(c.replies for c in full.comments)  # nested replies are kept


def _post(**fields: object) -> list[dict[str, object]]:
    return [{"kind": "Listing", "data": {"children": [{"kind": "t3", "data": {
        "title": "T", "author": "op", **fields}}]}}]  # fmt: skip


@pytest.mark.parametrize(
    ("fields", "video"),
    [
        ({}, False),
        ({"is_video": True}, True),
        ({"is_video": False, "secure_media": None, "media": None}, False),
        (
            {
                "secure_media": {
                    "reddit_video": {"fallback_url": "https://v.redd.it/x/DASH_720.mp4"}
                }
            },
            True,
        ),
        ({"media": {"oembed": {"type": "video"}}}, False),  # an embed: its page says so itself
        ({"crosspost_parent_list": [{"is_video": True}]}, True),
        ({"crosspost_parent_list": [{"is_video": False}]}, False),
    ],
)
def test_a_reddit_hosted_video_post(fields: dict[str, object], video: bool) -> None:
    assert parse_thread(_post(**fields)).has_video is video


def test_praw_recordings_say_which_post_is_a_video(corpora: Path) -> None:
    folder = corpora / "platforms" / "reddit" / "json"
    videos = {
        path.name
        for path in folder.glob("*_*.json")
        if parse_thread(json.loads(path.read_text())).has_video
    }
    assert videos == {"k5rsq3_video.json"}
