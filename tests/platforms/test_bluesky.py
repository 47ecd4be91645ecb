"""Bluesky's chain (resolveHandle, getPostThread, the images' blobs from the author's PDS)
against a local AppView, PLC directory and PDS answering in the documented shapes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from shared.platforms.bluesky import expand_facets
from testkit.bluesky_data import BLOB_CIDS, BSKY_DID, BSKY_RKEYS
from testkit.platform_server import PlatformServer, run_platform


def link(case: str, handle: str = "ada.example.social") -> str:
    return f"https://bsky.app/profile/{handle}/post/{BSKY_RKEYS[case]}"


def test_a_post_with_its_shortened_link_expanded(server: PlatformServer) -> None:
    result = asyncio.run(run_platform(server, link("normal")))
    post = result.post
    assert post is not None and post.source == "appview"
    assert post.text == "Notes on keeping links alive https://example.org/notes/keeping-links-alive"
    assert (post.author.name, post.author.handle, post.author.id) == (
        "Ada Example",
        "ada.example.social",
        BSKY_DID,
    )
    assert post.created_at == "2024-05-02T08:30:00Z" and post.language == "en"
    assert (post.counts.likes, post.counts.reposts, post.counts.replies) == (7, 1, 2)
    assert post.url == link("normal")
    assert [s.step for s in result.steps] == ["appview"]


def test_facets_count_utf8_bytes() -> None:
    text = "Grüße 🌍 site.org/a…"
    start = len("Grüße 🌍 ".encode())
    facet = {
        "index": {"byteStart": start, "byteEnd": len(text.encode())},
        "features": [{"$type": "app.bsky.richtext.facet#link", "uri": "https://site.org/abc"}],
    }
    assert expand_facets(text, [facet]) == "Grüße 🌍 https://site.org/abc"
    assert expand_facets(text, [{"index": {"byteStart": 5, "byteEnd": 999}}]) == text


def test_four_images_from_the_blob_store(server: PlatformServer, tmp_path: Path) -> None:
    post = asyncio.run(run_platform(server, link("four_images"), tmp_path)).post
    assert post is not None and len(post.media) == 4
    for n, item in enumerate(post.media):
        assert "/pds/xrpc/com.atproto.sync.getBlob" in item.url and BLOB_CIDS[n] in item.url
        assert item.alt == f"picture {n + 1}" and item.file is not None
        assert (tmp_path / item.file).read_bytes()[:4] == b"\x89PNG"
    assert len(set(post.files())) == 4


def test_a_quote_and_a_video(server: PlatformServer) -> None:
    quote = asyncio.run(run_platform(server, link("quote", "brook.example.social"))).post
    assert quote is not None and quote.quoted is not None
    assert (
        quote.quoted.text == "Quoted words" and quote.quoted.author.handle == "ada.example.social"
    )
    video = asyncio.run(run_platform(server, link("video", "brook.example.social"))).post
    assert video is not None and video.media[0].kind == "video" and video.has_video()


def test_parents_and_replies_of_a_thread(server: PlatformServer) -> None:
    post = asyncio.run(run_platform(server, link("reply"), reply_depth=2)).post
    assert post is not None and post.parent is not None and post.parent.parent is not None
    assert post.parent.text == "A reply" and post.parent.parent.text == "The first word"
    assert [r.text for r in post.replies] == ["A reply to the reply", ""]
    assert post.replies[1].unavailable == "not found"
    capped = asyncio.run(run_platform(server, link("reply"), replies=1)).post
    assert capped is not None and len(capped.replies) == 1


@pytest.mark.parametrize(
    ("case", "verdict", "code"),
    [
        ("tombstone", "gone", "E_BLUESKY_NOT_FOUND"),
        ("not_found", "gone", "E_BLUESKY_NOT_FOUND"),
        ("rate_limited", "unknown", "E_BLUESKY_RATE_LIMITED"),
        ("server_error", "unknown", "E_BLUESKY_HTTP_5XX"),
        ("login", "unknown", "E_BLUESKY_LOGIN_WALL"),
        ("html", "unknown", "E_BLUESKY_BAD_ANSWER"),
        ("huge", "unknown", "E_BLUESKY_TOO_LARGE"),
        ("malformed", "unknown", "E_BLUESKY_BAD_ANSWER"),
    ],
)
def test_each_failure_ends_with_a_clear_code(
    server: PlatformServer, case: str, verdict: str, code: str
) -> None:
    result = asyncio.run(run_platform(server, link(case)))
    assert result.post is None and result.verdict == verdict
    assert result.error_code("BLUESKY") == code


def test_an_unknown_handle_is_not_evidence_of_deletion(server: PlatformServer) -> None:
    result = asyncio.run(run_platform(server, link("normal", "nobody.example.social")))
    assert result.verdict == "unknown" and result.error_code("BLUESKY") == "E_BLUESKY_UNAVAILABLE"
