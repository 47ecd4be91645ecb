"""The tiktok plugin's API hook as a real subprocess against the local stand-ins (the chain
itself: tests/platforms/)."""

from __future__ import annotations

from pathlib import Path

from testkit.platform_pages import TIKTOK_IDS
from testkit.platform_server import check_failure, check_post_kept


def test_the_post_and_its_images_are_kept(tmp_path: Path) -> None:
    check_post_kept(
        "tiktok",
        f"https://www.tiktok.com/@ada.example/photo/{TIKTOK_IDS['photo']}",
        "webpage",
        3,
        tmp_path,
    )


def test_a_failure_ends_with_its_code(tmp_path: Path) -> None:
    check_failure(
        "tiktok",
        f"https://www.tiktok.com/@ada.example/video/{TIKTOK_IDS['private']}",
        "E_TIKTOK_PRIVATE",
        0,
        tmp_path,
    )
