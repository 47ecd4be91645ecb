"""The imgur plugin's API hook as a real subprocess against the local stand-ins (the chain
itself: tests/platforms/)."""

from __future__ import annotations

from pathlib import Path

from testkit.platform_server import check_post_kept


def test_the_post_and_its_images_are_kept(tmp_path: Path) -> None:
    check_post_kept("imgur", "https://imgur.com/gallery/abcde12", "oembed", 1, tmp_path)
