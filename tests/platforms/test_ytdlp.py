"""yt-dlp's step: the mapping of each extractor's info dictionary to a post (fictional
values in each extractor's shape; TikTok's saved info JSON when the corpora are present),
its failures as outcomes, and once end to end with real yt-dlp on a local page (its
connections through the target guard, the site's cookies sent)."""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shared.cookies import CookieSet
from shared.platforms import ytdlp
from shared.platforms.ytdlp_errors import classify
from testkit.httpserver import FixtureServer, Reply

CORPORA = Path(__file__).resolve().parents[2].parent / "shared" / "corpora" / "platforms"
VIDEO_FORMATS = [
    {"format_id": "hd", "vcodec": "avc1", "acodec": "mp4a", "url": "https://cdn/v.mp4"}
]
THUMBS = [
    {"url": "https://cdn/small.jpg", "width": 120},
    {"url": "https://cdn/big.jpg", "width": 1280},
]

YOUTUBE: dict[str, Any] = {
    "id": "aBcDeFgHiJk",
    "title": "How archives work",
    "description": "A talk.\nhttps://example.org",
    "uploader": "Ada Example",
    "uploader_id": "@adaexample",
    "uploader_url": "https://www.youtube.com/@adaexample",
    "channel": "Ada Example",
    "channel_id": "UCexample000000000000000",
    "channel_url": "https://www.youtube.com/channel/UCexample000000000000000",
    "timestamp": 1714550400,
    "upload_date": "20240501",
    "duration": 305,
    "view_count": 1000,
    "like_count": 50,
    "comment_count": 7,
    "language": "en",
    "thumbnails": THUMBS,
    "formats": VIDEO_FORMATS,
    "webpage_url": "https://www.youtube.com/watch?v=aBcDeFgHiJk",
    "extractor_key": "Youtube",
    "comments": [
        {
            "id": "c1",
            "text": "Great talk",
            "author": "@brook",
            "author_id": "UCbrook",
            "timestamp": 1714560000,
            "like_count": 3,
            "parent": "root",
        },
        {"id": "c1.r", "text": "agreed", "author": "@cal", "parent": "c1"},
    ],
}
TIKTOK: dict[str, Any] = {
    "id": "7300000000000000001",
    "title": "Morning by the river",
    "description": "Morning by the river #walk",
    "uploader": "ada.example",
    "uploader_id": "6800000000000000001",
    "uploader_url": "https://www.tiktok.com/@ada.example",
    "channel": "Ada Example",
    "channel_id": "MS4wLjABAAAAexample",
    "timestamp": 1714550400,
    "view_count": 50000,
    "like_count": 1200,
    "repost_count": 30,
    "comment_count": 45,
    "thumbnails": THUMBS,
    "formats": VIDEO_FORMATS,
    "duration": 15,
    "webpage_url": "https://www.tiktok.com/@ada.example/video/7300000000000000001",
    "extractor_key": "TikTok",
}
INSTAGRAM: dict[str, Any] = {
    "_type": "playlist",
    "id": "3300000000000000001",
    "title": "Post by ada.example",
    "description": "Two clips from the coast",
    "channel": "ada.example",
    "uploader": "Ada Example",
    "uploader_id": "4400001",
    "timestamp": 1714550400,
    "like_count": 80,
    "comment_count": 4,
    "extractor_key": "Instagram",
    "webpage_url": "https://www.instagram.com/p/Cexample01/",
    "entries": [
        {"id": "a", "formats": VIDEO_FORMATS, "thumbnails": THUMBS, "duration": 4},
        {"id": "b", "formats": VIDEO_FORMATS, "thumbnails": THUMBS, "duration": 6},
    ],
}
TWITTER: dict[str, Any] = {
    "id": "1790000000000000003",
    "title": "Brook Sample - A short clip",
    "description": "A short clip",
    "uploader": "Brook Sample",
    "uploader_id": "brook_sample",
    "channel_id": "1002",
    "uploader_url": "https://twitter.com/brook_sample",
    "timestamp": 1714564800,
    "like_count": 42,
    "repost_count": 5,
    "comment_count": 3,
    "view_count": 1234,
    "formats": VIDEO_FORMATS,
    "thumbnails": THUMBS,
    "extractor_key": "Twitter",
}
FACEBOOK: dict[str, Any] = {
    "id": "1234567",
    "title": "Opening hours",
    "description": "Opening hours change next week.",
    "uploader": "Example Page",
    "uploader_id": "100000001",
    "timestamp": 1714737600,
    "formats": VIDEO_FORMATS,
    "thumbnail": "https://cdn/fb.jpg",
    "extractor_key": "Facebook",
}
IMGUR_IMAGE: dict[str, Any] = {
    "id": "abcde12",
    "title": "A harbour",
    "ext": "png",
    "url": "https://i.imgur.com/abcde12.png",
    "width": 640,
    "height": 480,
    "extractor_key": "Imgur",
}
STREAMABLE: dict[str, Any] = {
    "id": "abc12",
    "title": "Goal!",
    "timestamp": 1714737600,
    "duration": 9.5,
    "formats": VIDEO_FORMATS,
    "thumbnail": "https://cdn/s.jpg",
    "extractor_key": "Streamable",
}
TELEGRAM: dict[str, Any] = {
    "id": "77",
    "title": "Example Channel",
    "description": "News of the day",
    "channel_id": "examplechannel",
    "formats": VIDEO_FORMATS,
    "thumbnail": "https://cdn/t.jpg",
    "extractor_key": "TelegramEmbed",
}


def test_youtube() -> None:
    post = ytdlp.post_from_info(YOUTUBE, "youtube", "https://youtu.be/aBcDeFgHiJk")
    assert post.title == "How archives work" and post.text == "A talk.\nhttps://example.org"
    assert (post.author.name, post.author.handle, post.author.id) == (
        "Ada Example",
        "adaexample",
        "UCexample000000000000000",
    )
    assert post.created_at == "2024-05-01T08:00:00Z" and post.language == "en"
    assert (post.counts.likes, post.counts.replies, post.counts.views, post.counts.reposts) == (
        50,
        7,
        1000,
        None,
    )
    video = post.media[0]
    assert (
        video.kind == "video" and video.poster == "https://cdn/big.jpg" and video.duration_s == 305
    )
    assert [r.text for r in post.replies] == ["Great talk"]  # top-level comments only
    assert post.replies[0].url.endswith("lc=c1") and post.replies[0].counts.likes == 3


def test_tiktok_names_handle_and_display_name_its_own_way() -> None:
    post = ytdlp.post_from_info(TIKTOK, "tiktok", TIKTOK["webpage_url"])
    assert (post.author.name, post.author.handle, post.author.id) == (
        "Ada Example",
        "ada.example",
        "6800000000000000001",
    )
    assert post.title is None and post.text == "Morning by the river #walk"
    assert (post.counts.likes, post.counts.reposts, post.counts.replies, post.counts.views) == (
        1200,
        30,
        45,
        50000,
    )


def test_instagram_carousel_entries_are_its_media() -> None:
    post = ytdlp.post_from_info(INSTAGRAM, "instagram", INSTAGRAM["webpage_url"])
    assert post.author.handle == "ada.example" and post.author.name == "Ada Example"
    assert [m.kind for m in post.media] == [
        "video",
        "video",
    ] and post.text == "Two clips from the coast"


@pytest.mark.parametrize(
    ("info", "platform", "name", "text"),
    [
        (TWITTER, "x", "Brook Sample", "A short clip"),
        (FACEBOOK, "facebook", "Example Page", "Opening hours change next week."),
        (STREAMABLE, "streamable", None, ""),
        (TELEGRAM, "telegram", None, "News of the day"),
    ],
)
def test_other_extractors(info: dict[str, Any], platform: str, name: str | None, text: str) -> None:
    post = ytdlp.post_from_info(info, platform, "https://example.invalid/p")
    assert post.platform == platform and post.post_id == info["id"] and post.author.name == name
    assert post.text == text and post.media[0].kind == "video"
    assert post.source == "yt-dlp"


def test_an_image_post() -> None:
    post = ytdlp.post_from_info(IMGUR_IMAGE, "imgur", "https://imgur.com/abcde12")
    assert post.title == "A harbour" and post.media[0].kind == "image"
    assert post.media[0].url == "https://i.imgur.com/abcde12.png" and post.media[0].width == 640


@pytest.mark.skipif(not (CORPORA / "tiktok").is_dir(), reason="corpora absent")
@pytest.mark.parametrize("name", ["tiktok_meta_video.json", "tiktok_meta_video2.json"])
def test_saved_tiktok_info(name: str) -> None:
    info = json.loads((CORPORA / "tiktok" / "ytdlp-info" / name).read_text())
    post = ytdlp.post_from_info(info, "tiktok", info["webpage_url"])
    assert post.post_id == info["id"] and post.author.handle == info["uploader"]
    assert post.created_at is not None and post.media[0].kind == "video"
    assert post.counts.likes == info.get("like_count")


@pytest.mark.parametrize(
    ("message", "verdict", "reason"),
    [
        (
            "ERROR: [youtube] x: Video unavailable. This video has been removed by the uploader",
            "gone",
            "removed",
        ),
        (
            "ERROR: [youtube] x: Private video. Sign in if you've been granted access",
            "gone",
            "private",
        ),
        (
            "ERROR: [generic] Unable to download webpage: HTTP Error 404: Not Found",
            "gone",
            "not_found",
        ),
        ("ERROR: [youtube] x: Sign in to confirm your age", "unknown", "login_required"),
        ("ERROR: [instagram] x: HTTP Error 429: Too Many Requests", "unknown", "rate_limited"),
        ("ERROR: [twitter] x: No video could be found in this tweet", "unknown", "no_post"),
        ("ERROR: Unable to download webpage: <urlopen error timed out>", "unknown", "network"),
    ],
)
def test_failures_as_outcomes(message: str, verdict: str, reason: str) -> None:
    outcome = ytdlp.failure_outcome("https://e/x", Exception(message), logged_in=False)
    assert (outcome.verdict, outcome.evidence.reason) == (verdict, reason)
    assert classify(Exception(message)).what


def test_a_login_asked_for_despite_cookies_is_logged_out() -> None:
    outcome = ytdlp.failure_outcome(
        "https://e/x", Exception("This content requires login"), logged_in=True
    )
    assert outcome.evidence.reason == "logged_out"


PAGE = b"""<!DOCTYPE html><html><head><title>A clip</title>
<meta property="og:title" content="A clip by the sea">
<meta property="og:description" content="Waves.">
<meta property="og:video" content="/clip.mp4"><meta property="og:video:type" content="video/mp4">
</head><body><video src="/clip.mp4"></video></body></html>"""


@pytest.fixture(scope="module")
def site() -> Iterator[FixtureServer]:
    with FixtureServer() as s:
        s.routes["/post"] = Reply(PAGE)
        s.routes["/gone"] = Reply(b"<html><body>no</body></html>", 404)
        yield s


def _cookie(host: str, value: str) -> http.cookiejar.Cookie:
    return http.cookiejar.Cookie(
        0,
        "session",
        value,
        None,
        False,
        host,
        False,
        False,
        "/",
        True,
        False,
        None,
        False,
        None,
        None,
        {},
    )


def test_real_ytdlp_on_a_local_page_with_the_site_cookies(site: FixtureServer) -> None:
    cookies = CookieSet(site.host, (_cookie(site.host, "s3cr3t-session-value"),))
    opts = ytdlp.YtdlpOptions(user_agent="test", allow_private=True, cookies=cookies)
    outcome = asyncio.run(ytdlp.step(f"{site.base}/post", opts, "facebook"))
    assert outcome.verdict == "present" and outcome.post is not None
    post = outcome.post
    assert post.media[0].kind == "video" and post.source == "yt-dlp"
    assert "A clip" in (post.title or "")
    sent = [h.get("Cookie", "") for path, h in site.requests if path == "/post"]
    assert sent and "session=s3cr3t-session-value" in sent[-1]
    assert "s3cr3t" not in post.model_dump_json()


def test_real_ytdlp_404_is_gone_and_private_targets_refused(site: FixtureServer) -> None:
    gone = asyncio.run(
        ytdlp.step(f"{site.base}/gone", ytdlp.YtdlpOptions("t", allow_private=True), "x")
    )
    assert (gone.verdict, gone.evidence.reason) == ("gone", "not_found")
    before = len(site.requests)
    refused = asyncio.run(ytdlp.step(f"{site.base}/post", ytdlp.YtdlpOptions("t"), "x"))
    assert (refused.verdict, refused.evidence.reason) == ("unknown", "refused")
    assert len(site.requests) == before, "the guard stopped yt-dlp before any request"
