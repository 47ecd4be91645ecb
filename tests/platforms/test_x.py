"""X's chain (syndication, then fxtwitter) against local stand-ins answering in the
endpoints' documented shapes, fictional accounts: each case ends with the right post or a
clear error code."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from shared.hooks.error_codes import kind_of
from shared.platforms import x
from testkit.platform_data import LONG_TEXT, X_IDS
from testkit.platform_server import PlatformServer, run_platform


def link(case: str, handle: str = "ada_example") -> str:
    return f"https://x.com/{handle}/status/{X_IDS[case]}"


def test_token_is_what_the_embed_script_computes() -> None:
    # ((id / 1e15) * Math.PI).toString(6 ** 2).replace(/(0+|\.)/g, ''), as node computes it
    assert x.token("1790000000000000001") == "4c7g8auqyik"
    assert x.recognise("https://twitter.com/i/web/status/123") is not None
    assert x.recognise("https://x.com/ada_example") is None


def test_a_normal_post_with_its_link_expanded(server: PlatformServer, tmp_path: Path) -> None:
    result = asyncio.run(run_platform(server, link("normal"), tmp_path))
    post = result.post
    assert post is not None and result.verdict == "present"
    assert post.source == "syndication" and post.post_id == X_IDS["normal"]
    assert post.text == "Reading about archives today https://example.org/archives/why"
    assert (post.author.name, post.author.handle, post.author.id) == (
        "Ada Example",
        "ada_example",
        "1001",
    )
    assert post.created_at == "2024-05-01T12:00:00Z" and post.language == "en"
    assert post.counts.likes == 42 and post.counts.replies == 3
    assert post.counts.views is None and post.counts.reposts is None  # absent, not 0
    assert result.report()["attempts"] == [
        {
            "step": "syndication",
            "verdict": "present",
            "url": result.steps[0].evidence.url,
            "status": 200,
            "reason": "ok",
            "text": "",
        }
    ]


def test_four_images_at_full_size_stored_as_our_copies(
    server: PlatformServer, tmp_path: Path
) -> None:
    result = asyncio.run(run_platform(server, link("four_images"), tmp_path))
    post = result.post
    assert post is not None and len(post.media) == 4
    assert post.text == "Four pictures of the harbour"  # the pic.x.com links are the images
    for n, item in enumerate(post.media, 1):
        assert item.kind == "image" and item.alt == f"picture {n}"
        assert "name=orig" in item.url
        assert item.file is not None and (tmp_path / item.file).read_bytes()[:4] == b"\x89PNG"
        assert item.content_type == "image/png" and item.sha256 and item.bytes


def test_a_video_is_left_to_the_media_service_its_poster_kept(
    server: PlatformServer, tmp_path: Path
) -> None:
    post = asyncio.run(run_platform(server, link("video", "brook_sample"), tmp_path)).post
    assert post is not None and post.has_video()
    video = post.media[0]
    assert video.kind == "video" and video.file is None and video.duration_s == 12.5
    assert video.url == f"https://x.com/brook_sample/status/{X_IDS['video']}"
    assert video.poster_file is not None and (tmp_path / video.poster_file).is_file()
    assert post.counts.views == 1234


def test_a_quote_is_a_nested_post(server: PlatformServer) -> None:
    post = asyncio.run(run_platform(server, link("quote", "caltest"))).post
    assert post is not None and post.quoted is not None
    assert post.quoted.author.handle == "ada_example" and post.quoted.counts.reposts == 2
    assert "Reading about archives today" in post.search_text()


def test_a_reply_chain_up_to_the_root(server: PlatformServer) -> None:
    post = asyncio.run(run_platform(server, link("reply", "caltest"))).post
    assert post is not None and post.parent is not None
    assert (
        post.parent.post_id == X_IDS["reply_parent"] and post.parent.author.handle == "brook_sample"
    )
    assert post.parent.parent is not None and post.parent.parent.post_id == X_IDS["reply_root"]
    assert post.parent.parent.text == "the reply root"


def test_a_long_post_gets_its_full_text_from_fxtwitter(server: PlatformServer) -> None:
    post = asyncio.run(run_platform(server, link("long"))).post
    assert post is not None and post.source == "syndication" and post.text == LONG_TEXT.strip()


@pytest.mark.parametrize(
    ("case", "verdict", "reason", "code"),
    [
        ("tombstone", "gone", "deleted", "E_X_REMOVED"),
        ("protected", "gone", "protected", "E_X_PRIVATE"),
        ("not_found", "gone", "not_found", "E_X_NOT_FOUND"),
        ("rate_limited", "unknown", "rate_limited", "E_X_RATE_LIMITED"),
        ("server_error", "unknown", "http_5xx", "E_X_HTTP_5XX"),
        ("login", "unknown", "login_wall", "E_X_LOGIN_WALL"),
        ("html", "unknown", "bad_answer", "E_X_BAD_ANSWER"),
        ("huge", "unknown", "too_large", "E_X_TOO_LARGE"),
        ("malformed", "unknown", "bad_answer", "E_X_BAD_ANSWER"),
    ],
)
def test_each_failure_ends_with_a_clear_code(
    server: PlatformServer, case: str, verdict: str, reason: str, code: str
) -> None:
    result = asyncio.run(run_platform(server, link(case)))
    assert result.post is None and result.verdict == verdict
    assert result.deciding is not None and result.deciding.evidence.reason == reason
    assert result.error_code("X") == code and kind_of(code) is not None
    if verdict == "unknown":  # the next step was tried: fxtwitter answers the same
        assert [s.step for s in result.steps] == ["syndication", "fxtwitter"]
    else:  # the platform's own word ends the chain
        assert [s.step for s in result.steps] == ["syndication"]


def test_the_tombstone_keeps_x_own_words(server: PlatformServer) -> None:
    step = asyncio.run(run_platform(server, link("tombstone"))).steps[0]
    assert step.evidence.text == "This Post was deleted by the Post author."
    assert step.evidence.status == 200


def test_fxtwitter_alone_when_syndication_is_rate_limited(server: PlatformServer) -> None:
    from shared.fetching.exchange import FetchLimits
    from shared.platforms.chain import Context, Settings, run_chain
    from shared.platforms.http import Client

    ref = x.recognise(link("four_images"))
    assert ref is not None

    async def only_fx() -> object:
        with Client(FetchLimits(total_timeout=5), user_agent="t", allow_private=True) as c:
            ctx = Context(Settings("t", True, server.bases()), c)
            return await run_chain(ctx, ref, (("fxtwitter", x.fxtwitter),))  # type: ignore[arg-type]

    result = asyncio.run(only_fx())
    post = result.post  # type: ignore[attr-defined]
    assert post.source == "fxtwitter" and len(post.media) == 4 and post.counts.views == 1000
    assert post.created_at == "2024-05-01T12:00:00Z"
