"""Reddit's post from the thread JSON: self text, link, author, time, score, the comment
tree to a depth, `[deleted]` and `[removed]` as Reddit shows them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared.platforms import reddit
from shared.platforms.reddit_thread import parse_thread

CORPORA = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "corpora"
    / "platforms"
    / "reddit"
    / "json"
)
PATH = "/r/example/comments/abc123/a_title/"


def thread(post: dict[str, Any], comments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"kind": "Listing", "data": {"children": [{"kind": "t3", "data": post}]}},
        {"kind": "Listing", "data": {"children": comments}},
    ]


def comment(
    cid: str, author: str, body: str, replies: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    listing = {"kind": "Listing", "data": {"children": replies or []}} if replies else ""
    return {
        "kind": "t1",
        "data": {
            "id": cid,
            "author": author,
            "body": body,
            "score": 2,
            "created_utc": 1714550400,
            "replies": listing,
        },
    }


POST = {
    "id": "abc123",
    "title": "A title",
    "author": "ada_example",
    "author_fullname": "t2_ada",
    "subreddit": "example",
    "permalink": PATH,
    "url": f"https://www.reddit.com{PATH}",
    "selftext": "Self text **bold**",
    "score": 15,
    "num_comments": 3,
    "created_utc": 1714550400.0,
}


def test_self_post_with_a_comment_tree_cut_to_its_depth() -> None:
    data = thread(
        POST,
        [
            comment(
                "c1",
                "brook",
                "first",
                [comment("c2", "cal", "second", [comment("c3", "ada_example", "third")])],
            ),
            comment("c4", "[deleted]", "[removed]"),
        ],
    )
    post = reddit.from_thread(
        parse_thread(data), f"https://old.reddit.com{PATH}", depth=2, limit=20
    )
    assert (
        post.title == "A title" and post.text == "Self text **bold**" and post.post_id == "abc123"
    )
    assert (post.author.name, post.author.handle, post.author.id) == (
        "u/ada_example",
        "ada_example",
        "t2_ada",
    )
    assert (
        post.created_at == "2024-05-01T08:00:00Z"
        and post.counts.likes == 15
        and post.counts.replies == 3
    )
    assert [r.text for r in post.replies] == ["first", "[removed]"]
    assert [r.text for r in post.replies[0].replies] == ["second"] and post.replies[0].replies[
        0
    ].replies == []
    assert post.replies[1].author.name == "[deleted]" and post.replies[1].author.handle is None
    assert post.unavailable is None


def test_a_removed_post_is_gone_with_what_reddit_still_shows() -> None:
    removed = {**POST, "selftext": "[removed]", "removed_by_category": "moderator"}
    outcome = reddit.outcome(
        parse_thread(thread(removed, [comment("c1", "brook", "first")])),
        f"https://www.reddit.com{PATH}",
        200,
        2,
        20,
    )
    assert outcome.verdict == "gone" and outcome.evidence.reason == "removed"
    assert (
        outcome.post is not None
        and outcome.post.text == "[removed]"
        and len(outcome.post.replies) == 1
    )
    assert outcome.post.unavailable == "removed (moderator)"


def test_a_link_post_with_an_image() -> None:
    image = {**POST, "selftext": "", "url": "https://i.redd.it/example.png", "post_hint": "image"}
    post = reddit.from_thread(parse_thread(thread(image, [])), f"https://www.reddit.com{PATH}")
    assert post.media[0].url == "https://i.redd.it/example.png" and post.text == ""


@pytest.mark.skipif(not CORPORA.is_dir(), reason="corpora absent")
@pytest.mark.parametrize(
    "name",
    ["2gmzqe_selfpost.json", "huw6vs_gallery.json", "k5rsq3_video.json", "3hahrw_thread_full.json"],
)
def test_saved_threads(name: str) -> None:
    data = json.loads((CORPORA / name).read_text())
    t = parse_thread(data)
    post = reddit.from_thread(t, "https://www.reddit.com" + t.permalink, depth=3, limit=50)
    assert post.post_id == t.id and post.title == t.title and len(list(post.walk())) <= 51
    if "gallery" in name:
        assert len(post.media) > 1 and all(m.kind == "image" for m in post.media)
    if "video" in name:
        assert post.media[0].kind == "video" and post.has_video()
