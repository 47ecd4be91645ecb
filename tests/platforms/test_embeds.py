"""The page and oEmbed steps of TikTok, Instagram, Facebook, Telegram, Imgur and Streamable
against local stand-ins (yt-dlp's own step, which would ask the real platform, is left
out here and tested in test_ytdlp.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from shared.platforms import telegram, tiktok
from shared.platforms.chain import PostRef
from testkit.platform_pages import TIKTOK_IDS
from testkit.platform_server import PlatformServer, run_platform

CORPORA = Path(__file__).resolve().parents[2].parent / "shared" / "corpora" / "platforms"


def tiktok_link(case: str, kind: str = "video") -> str:
    return f"https://www.tiktok.com/@ada.example/{kind}/{TIKTOK_IDS[case]}"


def test_a_tiktok_photo_slideshow_from_the_page_data(
    server: PlatformServer, tmp_path: Path
) -> None:
    result = asyncio.run(run_platform(server, tiktok_link("photo", "photo"), tmp_path))
    post = result.post
    assert post is not None and post.source == "webpage"
    assert [s.step for s in result.steps] == ["webpage"]
    assert [m.kind for m in post.media] == ["image"] * 3 and all(m.file for m in post.media)
    assert (post.author.name, post.author.handle) == ("Ada Example", "ada.example")
    assert post.created_at == "2024-05-01T08:00:00Z" and post.counts.views == 50000
    assert post.url.endswith(f"/photo/{TIKTOK_IDS['photo']}")


def test_a_tiktok_video_keeps_its_cover(server: PlatformServer, tmp_path: Path) -> None:
    post = asyncio.run(run_platform(server, tiktok_link("normal"), tmp_path)).post
    assert post is not None and post.media[0].kind == "video" and post.media[0].poster_file
    assert post.text == "Morning by the river #walk" and post.counts.likes == 1200


def test_a_private_tiktok_is_gone_by_its_status_code(server: PlatformServer) -> None:
    result = asyncio.run(run_platform(server, tiktok_link("private")))
    assert result.verdict == "gone" and result.error_code("TIKTOK") == "E_TIKTOK_PRIVATE"
    assert "10216" in result.steps[-1].evidence.text


def test_tiktok_falls_back_to_oembed_for_the_metadata(server: PlatformServer) -> None:
    result = asyncio.run(run_platform(server, tiktok_link("rate_limited")))
    post = result.post
    assert [s.step for s in result.steps] == ["webpage", "oembed"]
    assert result.steps[0].evidence.reason == "rate_limited"
    assert post is not None and post.source == "oembed" and post.author.handle == "ada.example"
    assert post.text == "A TikTok post by Ada" and post.media[0].kind == "image"


@pytest.mark.skipif(not (CORPORA / "tiktok").is_dir(), reason="corpora absent")
@pytest.mark.parametrize("name", ["tiktok_meta_gallery_music.json", "tiktok_meta_video-255.json"])
def test_saved_tiktok_items(name: str) -> None:
    item = json.loads((CORPORA / "tiktok/ytdlp-info" / name).read_text())
    post = tiktok.from_item(item, "https://www.tiktok.com/@x/video/1")
    photos = (item.get("imagePost") or {}).get("images")
    assert post.post_id == item["id"] and len(post.media) == (len(photos) if photos else 1)
    assert post.media[0].kind == ("image" if photos else "video")
    assert (
        post.author.handle == item["author"]["uniqueId"]
        and post.counts.likes == item["stats"]["diggCount"]
    )
    assert post.created_at is not None and post.text == item["desc"]


def test_instagram_embed_caption_and_first_image(server: PlatformServer, tmp_path: Path) -> None:
    result = asyncio.run(run_platform(server, "https://www.instagram.com/p/Cexample01/", tmp_path))
    post = result.post
    assert [s.step for s in result.steps] == ["embed"]
    assert post is not None and post.source == "embed" and post.author.handle == "ada.example"
    assert post.text == "Harbour at dusk, post Cexample01\n#evening"
    assert (
        post.media[0].url.endswith("/media/photo1.png") and post.media[0].alt == "A harbour at dusk"
    )
    assert post.media[0].file is not None


def test_instagram_login_redirect_is_a_login_wall(server: PlatformServer) -> None:
    result = asyncio.run(run_platform(server, "https://www.instagram.com/p/login/"))
    assert (
        result.verdict == "unknown" and result.error_code("INSTAGRAM") == "E_INSTAGRAM_LOGIN_WALL"
    )


def test_facebook_embedded_post(server: PlatformServer) -> None:
    post = asyncio.run(
        run_platform(server, "https://www.facebook.com/examplepage/posts/1234567")
    ).post
    assert post is not None and post.author.name == "Example Page"
    assert post.text == "Opening hours change next week.\nSee you there."
    assert post.created_at == "2024-05-03T12:00:00Z" and post.media[0].alt == "The shop front"


def test_telegram_widget_with_full_links_and_views(server: PlatformServer) -> None:
    post = asyncio.run(run_platform(server, "https://t.me/examplechannel/77")).post
    assert post is not None and post.author.name == "Example Channel"
    assert post.text == "News of the day\nread https://example.org/news/of-the-day-in-full"
    assert post.counts.views == 12300 and post.created_at == "2024-05-03T09:15:00Z"
    assert post.media[0].url.endswith("/media/photo3.png")


def test_telegram_post_not_found_is_gone(server: PlatformServer) -> None:
    result = asyncio.run(run_platform(server, "https://t.me/examplechannel/404"))
    assert result.verdict == "gone" and result.error_code("TELEGRAM") == "E_TELEGRAM_NOT_FOUND"
    assert result.steps[-1].evidence.text == "Post not found"
    gone = telegram.from_widget(PostRef("telegram", "1", "u", "c"), "<html><body></body></html>")
    assert gone is None


@pytest.mark.parametrize("platform", ["imgur", "streamable"])
def test_oembed_metadata(server: PlatformServer, platform: str) -> None:
    url = {
        "imgur": "https://imgur.com/gallery/abcde12",
        "streamable": "https://streamable.com/abc12",
    }
    post = asyncio.run(run_platform(server, url[platform])).post
    assert post is not None and post.source == "oembed" and post.platform == platform
    assert post.author.name == "Ada Example"
