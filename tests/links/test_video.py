"""media_key: one key per video across URL variants; direct media files; non-videos."""

from __future__ import annotations

import pytest

from shared.links.video_key import is_media_file, is_video_link, media_key

SAME_VIDEO = {
    "youtube:dQw4w9WgXcQ": [
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
        "https://youtu.be/dQw4w9WgXcQ",
        "https://youtu.be/dQw4w9WgXcQ?si=AbCdEf123&t=42",
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=1m5s&feature=share",
        "https://m.youtube.com/watch?v=dQw4w9WgXcQ&pp=ygUE",
        "https://www.youtube.com/shorts/dQw4w9WgXcQ?feature=share",
        "https://youtube.com/embed/dQw4w9WgXcQ",
        "https://www.youtube.com/live/dQw4w9WgXcQ?si=x",
        "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ",
        "https://music.youtube.com/watch?v=dQw4w9WgXcQ&list=RD",
    ],
    "tiktok:7234567890123456789": [
        "https://www.tiktok.com/@someone/video/7234567890123456789",
        "https://m.tiktok.com/@someone/video/7234567890123456789?is_from_webapp=1&sender_device=pc",
        "https://www.tiktok.com/embed/v2/7234567890123456789",
    ],
    "twitter:1790000000000000001": [
        "https://x.com/someone/status/1790000000000000001",
        "https://twitter.com/someone/status/1790000000000000001?s=20&t=abc",
        "https://mobile.twitter.com/someone/status/1790000000000000001/video/1",
        "https://x.com/i/web/status/1790000000000000001",
    ],
    "instagram:C1a2B3c4D5e": [
        "https://www.instagram.com/reel/C1a2B3c4D5e/?igsh=MWQ1ZGUxMzBkMA==",
        "https://instagram.com/p/C1a2B3c4D5e/",
        "https://www.instagram.com/someone/reel/C1a2B3c4D5e/",
    ],
    "facebook:1234567890": [
        "https://www.facebook.com/watch/?v=1234567890",
        "https://m.facebook.com/somepage/videos/1234567890/",
        "https://www.facebook.com/reel/1234567890",
    ],
    "bluesky:3kabc123xyz": ["https://bsky.app/profile/someone.bsky.social/post/3kabc123xyz"],
    "reddit:abc123def": ["https://v.redd.it/abc123def", "https://v.redd.it/abc123def/"],
    "streamable:ab12cd": ["https://streamable.com/ab12cd", "https://streamable.com/e/ab12cd"],
    "vimeo:76979871": [
        "https://vimeo.com/76979871",
        "https://player.vimeo.com/video/76979871?h=8272103f6e",
        "https://vimeo.com/channels/staffpicks/76979871",
    ],
    "url:https://cdn.example/v/clip.mp4": [
        "https://cdn.example/v/clip.mp4",
        "https://CDN.example/v/clip.mp4#t=10",
        "https://cdn.example/v/clip.mp4?t=10",
    ],
}


@pytest.mark.parametrize(("key", "url"), [(k, u) for k, urls in SAME_VIDEO.items() for u in urls])
def test_every_variant_of_a_video_has_its_key(key: str, url: str) -> None:
    assert str(media_key(url)) == key
    assert is_video_link(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://www.youtube.com/@channel",
        "https://www.youtube.com/watch?v=short",
        "https://www.youtube.com/playlist?list=PL123",
        "https://x.com/someone",
        "https://www.reddit.com/r/videos/comments/abc/title/",
        "https://blog.example/post.html",
        "https://vimeo.com/about",
        "not a url",
        "http://[::1/clip.mp4",  # a broken IPv6 literal: urlsplit raises
        "https://www.youtube.com]/watch?v=dQw4w9WgXcQ",
    ],
)
def test_links_that_are_not_a_known_video(url: str) -> None:
    assert media_key(url) is None and not is_video_link(url)


def test_direct_media_files() -> None:
    assert is_media_file("https://a.example/x/stream.m3u8?token=1")
    assert is_media_file("https://a.example/x/CLIP.WEBM")
    assert not is_media_file("https://a.example/x/page.html")
    assert is_media_file("https://feeds.example/podcast/ep-12.MP3?source=rss")
    assert str(media_key("https://feeds.example/ep.m4a#t=30")) == "url:https://feeds.example/ep.m4a"
    signed = media_key("https://cdn.example/v.mp4?sig=abc&t=5")
    assert str(signed) == "url:https://cdn.example/v.mp4?sig=abc"
