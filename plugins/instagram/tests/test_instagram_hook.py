"""The instagram plugin's API hook as a real subprocess against the local stand-ins (the chain
itself: tests/platforms/)."""

from __future__ import annotations

from pathlib import Path

from testkit.platform_server import check_failure, check_post_kept


def test_the_post_and_its_images_are_kept(tmp_path: Path) -> None:
    check_post_kept("instagram", "https://www.instagram.com/p/Cexample01/", "embed", 1, tmp_path)


def test_a_failure_ends_with_its_code(tmp_path: Path) -> None:
    check_failure(
        "instagram",
        "https://www.instagram.com/p/rate_limited/",
        "E_INSTAGRAM_RATE_LIMITED",
        1,
        tmp_path,
    )
