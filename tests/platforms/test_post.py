"""The post shape: times in UTC, nested posts, the search text, our files, JSON with the
unknown counts absent."""

from __future__ import annotations

import json

from shared.hooks.records import PostRecord, dump_record, parse_record
from shared.platforms.post import TEXT_LIMIT, Author, Counts, Post, PostMedia, iso_utc


def test_times() -> None:
    assert iso_utc(1714550400) == "2024-05-01T08:00:00Z"
    assert iso_utc("1714550400000") == "2024-05-01T08:00:00Z"
    assert iso_utc("Wed May 01 12:00:00 +0000 2024") == "2024-05-01T12:00:00Z"
    assert iso_utc("2024-05-01T14:00:00+02:00") == "2024-05-01T12:00:00Z"
    assert iso_utc("yesterday") is None and iso_utc(None) is None and iso_utc(True) is None


def test_nesting_search_text_files_and_the_record() -> None:
    quoted = Post(
        platform="x",
        post_id="2",
        url="u2",
        author=Author(name="Bo", handle="bo"),
        text="quoted words",
        media=[PostMedia(kind="image", url="i", file="media/2.png")],
    )
    post = Post(
        platform="x",
        post_id="1",
        url="u1",
        author=Author(name="Ada", handle="ada"),
        text="x" * (TEXT_LIMIT + 5),
        quoted=quoted,
        counts=Counts(likes=3),
        media=[PostMedia(kind="video", url="v", poster_file="media/1.png")],
        created_at=1714550400,
        source="syndication",
    )
    assert len(post.text) == TEXT_LIMIT and post.text.endswith("…")
    assert [p.post_id for p in post.walk()] == ["1", "2"]
    assert "Bo bo\nquoted words" in post.search_text()
    assert post.files() == ["media/1.png", "media/2.png"] and post.has_video()
    line = dump_record(PostRecord(post=post))
    counts = json.loads(line)["post"]["counts"]
    assert counts == {"likes": 3}  # unknown counts are absent, never 0
    back = parse_record(line)
    assert isinstance(back, PostRecord) and back.post == post


def test_junk_counts_and_sizes_are_unknown_not_a_lost_post() -> None:
    from shared.platforms.post import Counts, PostMedia

    counts = Counts(likes=-3, reposts="12", replies=float("inf"), views="lots")  # type: ignore[arg-type]
    assert (counts.likes, counts.reposts, counts.replies, counts.views) == (None, 12, None, None)
    media = PostMedia(kind="image", url="https://img.example/1.jpg", width="1200px",  # type: ignore[arg-type]
                      height=-1, bytes=float("nan"), duration_s="long")  # type: ignore[arg-type]  # fmt: skip
    assert (media.width, media.height, media.bytes, media.duration_s) == (None, None, None, None)
    assert PostMedia(kind="video", url="u", duration_s=12.5, width=640.0).duration_s == 12.5  # type: ignore[arg-type]
