"""`dla show` prints the sections of the link page: its videos and recordings, and its
original's state, beside its fields, posts and snapshots."""

from __future__ import annotations

from services.supervisor.cli.browse import print_link
from services.supervisor.cli.output import out

LINK = {
    "id": 13,
    "url": "https://feeds.example/podcast/episode-12",
    "status": "archived",
    "metadata": {"title": "Episode 12"},
    "occurrences": [{"forum": "forum.example", "topic_title": "Podcasts", "author": "ada"}],
    "snapshots": [{"id": "01a2", "status": "succeeded", "outcome": "succeeded", "results": []}],
    "videos": [
        {"platform": "html5mediaembed", "video_id": "episode-1", "title": "Episode 12",
         "status": "downloaded", "error_code": None,
         "files": [{"kind": "audio"}, {"kind": "info"}]},
        {"platform": "youtube", "video_id": "dQw4w9WgXcQ", "title": None, "status": "failed",
         "error_code": "E_MEDIA_PRIVATE", "files": []},
    ],
    "source_status": {"state": "gone", "since": "2026-11-02T10:00:00Z", "reason": "HTTP 404",
                      "last_checked_at": "2026-11-03T10:00:00Z", "next_check_at": None},
}  # fmt: skip


def test_show_prints_the_videos_and_the_originals_state() -> None:
    with out.capture() as captured:
        print_link(13, LINK)
    printed = captured.get()
    assert "videos and recordings" in printed
    assert "downloaded" in printed and "audio, info" in printed
    assert "failed" in printed and "E_MEDIA_PRIVATE" in printed
    assert "the original now" in printed and "gone" in printed and "HTTP 404" in printed
    assert "where posted" in printed and "snapshots" in printed


def test_a_link_never_checked_has_no_original_section() -> None:
    quiet = LINK | {"videos": [], "source_status": {"state": "unknown"}}
    with out.capture() as captured:
        print_link(13, quiet)
    printed = captured.get()
    assert "the original now" not in printed and "videos and recordings" not in printed
