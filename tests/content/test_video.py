"""shows_video: the page hint that gives a link a media job."""

from __future__ import annotations

import pytest

from shared.content.video_hint import shows_video


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ('<html><head><meta property="og:video" content="/v.mp4"></head></html>', True),
        (
            '<html><head><meta name="twitter:player:stream" content="https://x/v"></head></html>',
            True,
        ),
        ("<html><body><video src=/clip.webm></video></body></html>", True),
        (
            '<html><body><iframe src="//www.youtube.com/embed/dQw4w9WgXcQ"></iframe></body></html>',
            True,
        ),
        ("<html><body><a href='https://cdn.example/s/index.m3u8?x=1'>live</a></body></html>", True),
        ("<html><body><a href='/page.html'>no</a><img src=a.png></body></html>", False),
        ('<html><body><iframe src="https://maps.example/embed"></iframe></body></html>', False),
        ('<html><head><meta property="og:video" content=""></head></html>', False),
        ("", False),
    ],
)
def test_shows_video(html: str, expected: bool) -> None:
    assert shows_video(html) is expected
