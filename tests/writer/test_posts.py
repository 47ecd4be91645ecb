"""Platform posts in the writer: the post stored with its search text, a removed one never
replacing a whole one, and a link whose post the API kept archived although the browser met
a login wall (without a post, the wall is no archive: the link reads "not archived: the site
asked for a login" and is tried again on the normal schedule); an expired session is
counted."""

from __future__ import annotations

import json
from typing import Any

import pytest
from prometheus_client import REGISTRY

from services.web.present import display_status
from services.writer import moderation
from shared.hooks.records import ArchiveResultRecord, ArtifactRecord, PostRecord
from shared.hooks.retry import MAX_ATTEMPTS
from shared.platforms.post import Author, Post
from testkit.writer_harness import Harness, done, event, occ, post

URL = "https://x.com/ada_example/status/1790000000000000001"
NAV = "on_Snapshot__21_navigate.py"
API = "on_Snapshot__15_x.py"
PAGE = "on_Snapshot__71_x_page.py"
SHOT = "on_Snapshot__51_screenshot.py"


def res(plugin: str, hook: str, status: str, code: str | None = None) -> ArchiveResultRecord:
    return ArchiveResultRecord(status=status, plugin=plugin, hook=hook, error_code=code)  # type: ignore[arg-type]


def the_post(
    text: str = "Reading about archives today", unavailable: str | None = None
) -> PostRecord:
    body = Post(platform="x", post_id="1790000000000000001", url=URL, text=text,
                author=Author(name="Ada Example", handle="ada_example"), source="syndication",
                unavailable=unavailable)  # fmt: skip
    return PostRecord(post=body, plugin="x")


def start(h: Harness) -> Any:
    h.apply(post("g1", occ(URL)))
    h.dispatch()
    return h.job(1)


def test_the_post_is_kept_and_searchable(h: Harness) -> None:
    job = start(h)
    h.apply(
        event(job, 0, the_post()), event(job, 1, res("x", API, "succeeded")), done(job, records=2)
    )
    row = h.rows("SELECT * FROM link_posts")[0]
    assert (row["platform"], row["plugin"], row["source"], row["author_handle"]) == (
        "x", "x", "syndication", "ada_example")  # fmt: skip
    assert row["snapshot_id"] == job["snapshot_id"]
    found = h.one("SELECT rowid FROM link_text_fts WHERE link_text_fts MATCH '\"archives\"'")
    assert found == job["link_id"]


def test_a_removed_post_never_replaces_a_whole_one(h: Harness) -> None:
    job = start(h)
    h.apply(event(job, 0, the_post()), done(job, records=1))
    h.apply(event(job, 1, the_post("[removed]", unavailable="removed (moderator)")))
    assert h.one("SELECT unavailable FROM link_posts") is None
    assert "Reading about archives" in h.one("SELECT post_json FROM link_posts")


def test_the_post_is_the_archive_when_the_browser_met_a_wall(h: Harness) -> None:
    job = start(h)
    h.apply(
        event(job, 0, the_post()),
        event(job, 1, res("x", API, "succeeded")),
        event(job, 2, res("navigate", NAV, "partial", "E_NAVIGATE_LOGIN_WALL")),
        event(job, 3, res("screenshot", SHOT, "succeeded")),
        event(job, 4, res("x", PAGE, "skipped")),
        done(job, records=5),
    )
    row = h.rows("SELECT * FROM links")[0]
    assert (row["status"], row["last_outcome"], row["last_error_code"]) == (
        "archived",
        "succeeded",
        None,
    )


def test_without_a_post_the_wall_is_no_archive_and_everything_is_tried_again(h: Harness) -> None:
    job = start(h)
    h.apply(
        event(job, 0, res("x", API, "failed", "E_X_RATE_LIMITED")),
        event(job, 1, res("navigate", NAV, "partial", "E_NAVIGATE_LOGIN_WALL")),
        event(job, 2, res("screenshot", SHOT, "succeeded")),
        event(job, 3, res("x", PAGE, "failed", "E_X_LOGIN_WALL")),
        done(job, records=4, retry=[API]),
    )
    row = h.rows("SELECT * FROM links")[0]
    assert (row["status"], row["last_outcome"], row["last_error_code"]) == (
        "failed", "failed", "E_NAVIGATE_LOGIN_WALL")  # fmt: skip
    assert row["retry_at"] is not None
    assert display_status(row["status"], row["last_error_code"])[0] == (
        "not archived: the site asked for a login"
    )
    again = h.job(1)  # the whole capture again, not only the API step: cookies may come
    assert (again["status"], again["retry_hooks"]) == ("queued", None)


def test_a_wall_alone_is_retried_on_the_normal_schedule(h: Harness) -> None:
    job = start(h)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        assert job["attempts"] == attempt
        h.apply(
            event(job, 0, res("navigate", NAV, "partial", "E_NAVIGATE_LOGIN_WALL")),
            event(job, 1, res("screenshot", SHOT, "succeeded")),
            done(job, records=2),
        )
        row = h.rows("SELECT * FROM links")[0]
        assert row["status"] == "failed" and row["last_error_code"] == "E_NAVIGATE_LOGIN_WALL"
        assert (row["retry_at"] is None) == (attempt == MAX_ATTEMPTS)
        h.advance(hours=13)  # past the longest backoff step
        h.dispatch()
        job = h.job(1)
    assert h.job(1)["status"] == "failed"
    assert h.rows("SELECT * FROM liveness_schedule") == []  # no archive to watch


@pytest.mark.parametrize("key", [f"x/{API}", API])  # a worker's HookSpec.key, the file alone
def test_a_post_from_the_page_step_needs_no_retry_of_the_api_step(h: Harness, key: str) -> None:
    job = start(h)
    h.apply(
        event(job, 0, res("x", API, "failed", "E_X_RATE_LIMITED")),
        event(job, 1, res("navigate", NAV, "succeeded")),
        event(job, 2, the_post()),
        event(job, 3, res("x", PAGE, "succeeded")),
        done(job, records=4, retry=[key]),
    )
    row = h.rows("SELECT * FROM links")[0]
    assert (row["status"], row["retry_at"]) == ("archived", None)
    assert h.job(1)["status"] == "succeeded"


def test_an_expired_session_is_counted(h: Harness) -> None:
    before = (
        REGISTRY.get_sample_value(
            "dla_writer_logged_out_total", {"plugin": "navigate", "domain": "x.com"}
        )
        or 0
    )
    job = start(h)
    h.apply(
        event(job, 0, res("navigate", NAV, "partial", "E_NAVIGATE_LOGGED_OUT")),
        done(job, records=1),
    )
    after = REGISTRY.get_sample_value(
        "dla_writer_logged_out_total", {"plugin": "navigate", "domain": "x.com"}
    )
    assert after == before + 1


def test_a_page_that_opts_out_keeps_nothing_of_its_capture(h: Harness) -> None:
    job = start(h)
    image = ArtifactRecord(plugin="x", kind="post_media", path="media/1.png",
                           s3_key=f"archives/1/{job['snapshot_id']}/x/media/1.png",
                           content_type="image/png", bytes=3, sha256="0" * 64)  # fmt: skip
    h.apply(
        event(job, 0, the_post()),
        event(job, 1, image),
        event(job, 2, res("x", API, "succeeded")),
        event(job, 3, res("navigate", NAV, "failed", "E_NAVIGATE_DECLINED")),
        done(job, records=4),
    )
    row = h.rows("SELECT * FROM links")[0]
    assert (row["status"], row["last_error_code"], row["retry_at"]) == (
        "failed", "E_NAVIGATE_DECLINED", None)  # fmt: skip
    assert display_status(row["status"], row["last_error_code"])[0] == (
        "not archived: the page asks not to be archived"
    )
    assert h.rows("SELECT * FROM link_posts") == []
    assert h.one("SELECT post_text FROM link_text_fts WHERE rowid = ?", row["id"]) == ""
    assert h.rows("SELECT * FROM archive_artifacts WHERE snapshot_id = ?", job["snapshot_id"]) == []
    assert moderation.pending_removals(h.conn) == [(row["id"], json.dumps([image.s3_key]), False)]
    assert h.rows("SELECT * FROM archive_jobs WHERE kind = 'media'") == []


def test_a_wall_only_an_api_step_met_leaves_the_browsers_page_an_archive(h: Harness) -> None:
    job = start(h)
    h.apply(
        event(job, 0, res("x", API, "failed", "E_X_LOGIN_WALL")),
        event(job, 1, res("navigate", NAV, "succeeded")),
        event(job, 2, res("screenshot", SHOT, "succeeded")),
        done(job, records=3),
    )
    row = h.rows("SELECT * FROM links")[0]
    assert (row["status"], row["last_error_code"]) == ("partial", "E_X_LOGIN_WALL")
    assert display_status(row["status"], row["last_error_code"])[0] == "partial · login_wall"
