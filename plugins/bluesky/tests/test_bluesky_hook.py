"""The bluesky plugin's API hook as a real subprocess against the local stand-ins (the chain
itself: tests/platforms/)."""

from __future__ import annotations

from pathlib import Path

from testkit.bluesky_data import BSKY_RKEYS
from testkit.platform_server import check_failure, check_post_kept


def test_the_post_and_its_images_are_kept(tmp_path: Path) -> None:
    check_post_kept(
        "bluesky",
        f"https://bsky.app/profile/ada.example.social/post/{BSKY_RKEYS['four_images']}",
        "appview",
        4,
        tmp_path,
    )


def test_a_failure_ends_with_its_code(tmp_path: Path) -> None:
    check_failure(
        "bluesky",
        f"https://bsky.app/profile/ada.example.social/post/{BSKY_RKEYS['tombstone']}",
        "E_BLUESKY_NOT_FOUND",
        0,
        tmp_path,
    )
