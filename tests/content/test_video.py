"""shows_video: the page hint that gives a link a media job; media_links: the files a page
links to, which the media hook downloads when yt-dlp finds no video on the page."""

from __future__ import annotations

import pytest

from shared.content.video_hint import media_links, shows_video


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ('<html><head><meta property="og:video" content="/v.mp4"></head></html>', True),
        (
            '<html><head><meta name="twitter:player:stream" content="https://x/v"></head></html>',
            True,
        ),
        ("<html><body><video src=/clip.webm></video></body></html>", True),
        ("<html><body><audio controls src=/ep-12.mp3></audio></body></html>", True),
        ("<html><body><a href='https://feeds.example/ep-12.mp3'>listen</a></body></html>", True),
        (
            '<html><body><iframe src="//www.youtube.com/embed/dQw4w9WgXcQ"></iframe></body></html>',
            True,
        ),
        ("<html><body><a href='https://cdn.example/s/index.m3u8?x=1'>live</a></body></html>", True),
        ("<html><body><a href='/page.html'>no</a><img src=a.png></body></html>", False),
        ('<html><body><iframe src="https://maps.example/embed"></iframe></body></html>', False),
        ('<html><head><meta property="og:video" content=""></head></html>', False),
        ("", False),
        # a hostile page's broken URLs are no video (and no crash of the metadata hook)
        ('<a href="http://[::1/x.mp4">v</a><iframe src="http://[::1/embed"></iframe>', False),
        ('<a href="http://[::1/x.mp4">v</a><a href="/ok.mp4">w</a>', True),
    ],
)
def test_shows_video(html: str, expected: bool) -> None:
    assert shows_video(html) is expected


def test_media_links_are_absolute_in_page_order_each_once() -> None:
    html = (
        "<p><a href='b/clip.MP4#t=3'>one</a> <a href='https://cdn.example/v.webm?x=1'>two</a>"
        " <a href='/a/b/clip.MP4'>again</a> <a href='javascript:x.mp4'>no</a>"
        " <a href='ftp://h/x.mp4'>no</a> <a href='page.html'>no</a> <a>no</a></p>"
    )
    assert media_links(html, "https://news.example/a/story") == [
        "https://news.example/a/b/clip.MP4",
        "https://cdn.example/v.webm?x=1",
    ]
    assert media_links("", "https://news.example/") == []
    assert media_links('<a href="http://[::1/x.mp4">v</a>', "https://news.example/") == []
