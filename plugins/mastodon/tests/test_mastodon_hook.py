"""The mastodon plugin's API hook as a real subprocess against the local stand-in of an
instance's status API (the chain itself: tests/platforms/test_mastodon.py)."""

from __future__ import annotations

from pathlib import Path

from testkit.mastodon_data import status_url
from testkit.platform_server import check_failure, check_post_kept


def test_the_status_and_its_images_are_kept(tmp_path: Path) -> None:
    check_post_kept("mastodon", status_url("two_images"), "status-api", 2, tmp_path)


def test_a_deleted_status_is_not_found_for_good(tmp_path: Path) -> None:
    check_failure("mastodon", status_url("not_found"), "E_MASTODON_NOT_FOUND", 0, tmp_path)


def test_a_rate_limit_is_retried(tmp_path: Path) -> None:
    check_failure("mastodon", status_url("rate_limited"), "E_MASTODON_RATE_LIMITED", 1, tmp_path)


def test_a_server_error_is_retried(tmp_path: Path) -> None:
    check_failure("mastodon", status_url("server_error"), "E_MASTODON_HTTP_5XX", 1, tmp_path)
