"""Media jobs in the writer: which links get one, one download per video, media text in the
search index, soft failures that leave the link alone, rate limits backing off a domain."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from services.writer import scheduler
from services.writer.clock import iso
from services.writer.scheduler import Limits
from shared.hooks.records import (
    ArchiveResultRecord,
    ArtifactRecord,
    MediaRecord,
    MetadataRecord,
    ProgressRecord,
)
from shared.hooks.retry import BACKOFF
from shared.messages import SubmitCommand
from shared.subjects import JOB_CAPTURE, JOB_MEDIA
from testkit.writer_harness import T0, Harness, done, event, occ, post

MEDIA_HOOK = "on_Snapshot__63_media.bg.py"
FETCH_HOOK = "on_Snapshot__41_fetch.py"


@pytest.fixture(autouse=True)
def media_on(h: Harness) -> None:
    h.policy = replace(h.policy, media_jobs=True)


def jobs(h: Harness) -> list[tuple[int, int, str, str, str]]:
    return h.tuples("SELECT id, link_id, kind, status, reason FROM archive_jobs ORDER BY id")


def media_result(status: str, code: str | None = None, attempt: int = 1) -> ArchiveResultRecord:
    return ArchiveResultRecord(
        status=status,  # type: ignore[arg-type]
        plugin="media",
        hook=MEDIA_HOOK,
        error_code=code,
        attempt=attempt,
    )


def search(h: Harness, words: str) -> list[int]:
    return [
        r[0]
        for r in h.tuples(
            "SELECT rowid FROM link_text_fts WHERE link_text_fts MATCH ? ORDER BY rowid", words
        )
    ]


def test_video_links_and_media_files_get_a_media_job_pages_do_not(h: Harness) -> None:
    h.apply(
        post(
            "g1",
            occ("https://youtu.be/dQw4w9WgXcQ?t=3"),
            occ("https://cdn.example/v/clip.mp4"),
            occ("https://blog.example/post"),
        )
    )
    assert jobs(h) == [
        (1, 1, "capture", "queued", "mode:all"),
        (2, 1, "media", "queued", "video link (youtube)"),
        (3, 2, "capture", "queued", "mode:all"),
        (4, 2, "media", "queued", "video link (url)"),
        (5, 3, "capture", "queued", "mode:all"),
    ]
    plans = scheduler.plan(h.conn, h.policy, Limits(10, 10, 10), h.now)
    assert {(p.subject, p.job.job_id) for p in plans} == {
        (JOB_CAPTURE, 1), (JOB_MEDIA, 2), (JOB_CAPTURE, 3), (JOB_MEDIA, 4), (JOB_CAPTURE, 5)
    }  # fmt: skip
    media_job = next(p.job for p in plans if p.job.job_id == 2)
    assert media_job.url == "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=3"


def test_a_manual_submission_of_a_video_gets_a_media_job(h: Harness) -> None:
    h.apply(SubmitCommand(url="https://vimeo.com/76979871", request_id="r1", requested_at=T0))
    assert [(k, s) for _, _, k, s, _ in jobs(h)] == [("capture", "queued"), ("media", "queued")]


def test_the_same_video_under_two_urls_is_downloaded_once(h: Harness) -> None:
    h.apply(post("g1", occ("https://www.youtube.com/watch?v=dQw4w9WgXcQ")))
    h.apply(post("g2", occ("https://youtu.be/dQw4w9WgXcQ?t=42&si=xy")))  # another link
    assert jobs(h)[1:] == [
        (2, 1, "media", "queued", "video link (youtube)"),
        (3, 2, "capture", "queued", "mode:all"),
        (4, 2, "media", "skipped_cached", "same video as link 1 (youtube:dQw4w9WgXcQ)"),
    ]
    assert h.tuples("SELECT link_id, media_id FROM link_media ORDER BY link_id") == [(1, 1), (2, 1)]
    # the download's metadata and transcript make both links findable
    h.dispatch()
    job = h.job(2)
    h.apply(
        event(job, 0, ProgressRecord(downloaded_bytes=500, total_bytes=1000, percent=50.0)),
    )
    assert h.one("SELECT percent FROM media_items") == 50.0
    h.apply(
        event(
            job,
            1,
            MediaRecord(
                platform="youtube",
                video_id="dQw4w9WgXcQ",
                title="Never gonna give",
                uploader="Rick Astley",
                description="The official video",
                transcript="we are no strangers to love",
            ),
        ),
        event(job, 2, media_result("succeeded")),
        done(job, records=3),
    )
    assert search(h, "strangers") == [1, 2]
    assert search(h, "astley") == [1, 2] and search(h, "official") == [1, 2]
    # a third link to the same video, after the download: no job, points at the download
    h.apply(post("g3", occ("https://music.youtube.com/watch?v=dQw4w9WgXcQ")))
    assert jobs(h)[-1][2:4] == ("media", "skipped_cached")
    assert search(h, "strangers") == [1, 2, 3]


def test_a_page_whose_capture_found_a_video_gets_one_media_job(h: Harness) -> None:
    h.apply(post("g1", occ("https://news.example/story")))
    h.dispatch()
    capture = h.job(1)
    h.apply(event(capture, 0, MetadataRecord(title="Story", has_video=True)))
    h.apply(event(capture, 1, MetadataRecord(has_video=True)))
    assert jobs(h) == [
        (1, 1, "capture", "running", "mode:all"),
        (2, 1, "media", "queued", "the page shows a video"),
    ]


def test_a_generic_video_found_again_on_another_page_points_at_the_first_download(
    h: Harness,
) -> None:
    for guid, url in (("g1", "https://a.example/p"), ("g2", "https://b.example/p")):
        h.apply(post(guid, occ(url)))
    h.dispatch()
    for capture in (h.job(1), h.job(2)):
        h.apply(event(capture, 0, MetadataRecord(has_video=True)))
    h.dispatch()
    rec = MediaRecord(platform="youtube", video_id="dQw4w9WgXcQ", title="Embedded", transcript="hi")
    media_jobs = [r[0] for r in jobs(h) if r[2] == "media"]
    for seq, job_id in enumerate(media_jobs):
        h.apply(event(h.job(job_id), seq, rec))
    assert h.one("SELECT count(*) FROM media_items") == 1
    assert h.tuples("SELECT link_id FROM link_media ORDER BY link_id") == [(1,), (2,)]
    assert h.one("SELECT job_id FROM media_items") == media_jobs[0]


def test_a_page_linking_a_downloaded_media_file_points_at_its_download(h: Harness) -> None:
    """The media hook downloads the file a page links to (yt-dlp's generic record names
    it by file name): a link to that file downloaded it already, so the page's link points
    at that one download."""
    h.apply(post("g1", occ("https://cdn.example/v/clip.mp4")))
    h.dispatch()
    download_clip(h, h.job(2))
    h.apply(post("g2", occ("https://news.example/story")))
    h.dispatch()
    h.apply(event(h.job(3), 0, MetadataRecord(has_video=True)))
    h.dispatch()
    (page_media,) = [r[0] for r in jobs(h) if r[1] == 2 and r[2] == "media"]
    found = MediaRecord(platform="generic", video_id="clip", title="clip",
                        media_url="https://cdn.example/v/clip.mp4?t=9")  # fmt: skip
    h.apply(event(h.job(page_media), 0, found))
    assert h.one("SELECT count(*) FROM media_items") == 1
    assert h.tuples("SELECT link_id, media_id FROM link_media ORDER BY link_id") == [(1, 1), (2, 1)]


def test_a_page_that_downloads_a_linked_file_first_is_not_archived_by_it(h: Harness) -> None:
    """The page's media job finds the file before the file's own link's job ran: that link
    (the file) is archived by the download; the page's link waits for its own capture."""
    h.apply(post("g1", occ("https://cdn.example/v/clip.mp4")))
    h.apply(post("g2", occ("https://news.example/story")))
    h.dispatch()
    story = next(j for j in jobs(h) if j[1] == 2 and j[2] == "capture")
    h.apply(event(h.job(story[0]), 0, MetadataRecord(has_video=True)))
    h.dispatch()
    page_media = h.job(next(j[0] for j in jobs(h) if j[1] == 2 and j[2] == "media"))
    found = MediaRecord(platform="generic", video_id="clip", title="clip", downloaded=True,
                        media_url="https://cdn.example/v/clip.mp4")  # fmt: skip
    download_clip(h, page_media, found)
    assert h.tuples("SELECT link_id, media_id FROM link_media ORDER BY link_id") == [(1, 1), (2, 1)]
    statuses = dict(h.tuples("SELECT id, status FROM links"))
    assert statuses[1] == "archived" and statuses[2] != "archived", statuses


def test_soft_media_failure_is_recorded_and_leaves_the_link_archived(h: Harness) -> None:
    h.apply(post("g1", occ("https://www.tiktok.com/@someone/video/7300000000000000001")))
    h.dispatch()
    capture, media_job = h.job(1), h.job(2)
    fetch_ok = ArchiveResultRecord(status="succeeded", plugin="fetch", hook=FETCH_HOOK)
    h.apply(event(capture, 0, fetch_ok), done(capture, records=1))
    assert h.one("SELECT status FROM links") == "archived"
    h.apply(
        event(media_job, 0, media_result("failed", "E_MEDIA_PRIVATE")), done(media_job, records=1)
    )
    assert h.job(2)["status"] == "failed" and "E_MEDIA_PRIVATE" in h.job(2)["last_error"]
    assert h.one("SELECT status FROM links") == "archived"
    assert h.tuples("SELECT status, error_code FROM media_items") == [("failed", "E_MEDIA_PRIVATE")]


def test_too_large_keeps_the_metadata(h: Harness) -> None:
    h.apply(post("g1", occ("https://cdn.example/big.mp4")))
    h.dispatch()
    job = h.job(2)
    info = ArtifactRecord(
        plugin="media", kind="info", path="big.info.json", s3_key="k/big.info.json",
        content_type="application/json", bytes=10, sha256="0" * 64,
    )  # fmt: skip
    h.apply(
        event(job, 0, info),
        event(job, 1, MediaRecord(platform="generic", video_id="big", downloaded=False)),
        event(job, 2, media_result("failed", "E_MEDIA_TOO_LARGE")),
        done(job, records=3),
    )
    assert h.tuples("SELECT status FROM media_items") == [("metadata_only",)]
    assert h.job(2)["status"] == "failed"


def test_a_rate_limit_backs_off_the_whole_domain(h: Harness) -> None:
    h.apply(
        post(
            "g1",
            occ("https://www.tiktok.com/@a/video/1"),
            occ("https://www.tiktok.com/@b/video/2"),
            occ("https://vimeo.com/76979871"),
        )
    )
    first = {j.job_id for j in h.dispatch(per_domain=1)}
    assert first == {1, 2, 5, 6}  # one capture and one media job per domain
    media_job = h.job(2)
    h.apply(
        event(media_job, 0, media_result("failed", "E_MEDIA_RATE_LIMITED")),
        done(media_job, records=1, retry=[MEDIA_HOOK]),
    )
    assert h.job(2)["status"] == "queued"  # retried with backoff
    (backoff,) = h.rows("SELECT domain, until FROM domain_backoff")
    assert backoff["domain"] == "tiktok.com"
    capture = h.job(1)
    fetch_ok = ArchiveResultRecord(status="succeeded", plugin="fetch", hook=FETCH_HOOK)
    h.apply(event(capture, 0, fetch_ok), done(capture, records=1))
    h.now += BACKOFF[0] / 2
    assert h.dispatch(per_domain=1) == [], "nothing of tiktok.com while it backs off"
    h.now += BACKOFF[0]
    assert {j.job_id for j in h.dispatch(per_domain=1)} == {3, 4}


def test_media_jobs_have_their_own_concurrency_and_deadline(h: Harness) -> None:
    h.apply(post("g1", occ("https://vimeo.com/1"), occ("https://streamable.com/ab12cd")))
    got = h.dispatch(concurrency=1, per_domain=5, media=1)
    assert sorted(j.job_id for j in got) == [1, 2]  # one capture + one media, not two captures
    media_job = h.job(2)
    assert media_job["kind"] == "media"
    assert media_job["deadline"] == iso(h.now + h.policy.media_job_deadline)
    for seq in range(6):  # a two-hour download reporting progress every 20 minutes
        h.now += h.policy.job_deadline + h.policy.job_deadline / 3
        h.apply(event(media_job, seq, ProgressRecord(downloaded_bytes=seq + 1)))
        h.dispatch(concurrency=1, media=1)
    assert h.job(2)["attempts"] == 1, "a long download with progress is not dispatched again"


def test_media_jobs_can_be_turned_off(h: Harness) -> None:
    h.policy = replace(h.policy, media_jobs=False)
    h.apply(post("g1", occ("https://vimeo.com/76979871")))
    assert [k for _, _, k, _, _ in jobs(h)] == ["capture"]


NOT_HTML = ArchiveResultRecord(
    status="failed", plugin="fetch", hook=FETCH_HOOK, error_code="E_FETCH_NOT_HTML"
)


def download_clip(h: Harness, media_job: Any, found: MediaRecord | None = None) -> None:
    """The media job of a clip.mp4 link (or of a page linking to it) downloads it."""
    video = ArtifactRecord(
        plugin="media", kind="video", path="clip.mp4", s3_key=f"k/{media_job['id']}/clip.mp4",
        content_type="video/mp4", bytes=10, sha256="0" * 64,
    )  # fmt: skip
    h.apply(
        event(media_job, 0, video),
        event(media_job, 1, found or MediaRecord(platform="generic", video_id="clip")),
        event(media_job, 2, media_result("succeeded")),
        done(media_job, records=3),
    )


def test_a_link_that_is_a_media_file_is_archived_by_its_download(h: Harness) -> None:
    h.apply(
        post("g1", occ("https://cdn.example/v/clip.mp4"), occ("https://cdn.example/v/clip.mp4?t=4"))
    )
    h.dispatch()
    capture, media_job = h.job(1), h.job(2)
    h.apply(event(capture, 0, NOT_HTML), done(capture, records=1))
    assert h.one("SELECT status FROM links WHERE id = 1") == "failed"
    download_clip(h, media_job)
    assert h.tuples("SELECT id, status FROM links ORDER BY id") == [
        (1, "archived"),
        (2, "archived"),
    ]


def test_a_media_file_downloaded_before_its_capture_ended_stays_archived(h: Harness) -> None:
    h.apply(post("g1", occ("https://cdn.example/v/clip.mp4")))
    h.dispatch()
    capture, media_job = h.job(1), h.job(2)
    download_clip(h, media_job)
    assert h.one("SELECT status FROM links WHERE id = 1") == "archived"
    h.advance(minutes=1)
    shot = ArchiveResultRecord(  # Chromium screenshots its player: the capture is partial
        status="succeeded", plugin="screenshot", hook="on_Snapshot__51_screenshot.py"
    )
    h.apply(event(capture, 0, shot), event(capture, 1, NOT_HTML), done(capture, records=2))
    row = h.rows("SELECT status, last_outcome, last_error_code FROM links")[0]
    assert tuple(row) == ("archived", "partial", "E_FETCH_NOT_HTML")  # what the capture did


X_POST = "https://x.com/ada_example/status/1790000000000000003"


def test_a_post_link_waits_for_its_capture_to_say_whether_it_holds_a_video(h: Harness) -> None:
    h.apply(post("g1", occ(X_POST), occ("https://bsky.app/profile/a.example/post/3kaaaaaaaaa21")))
    assert [(k, s) for _, _, k, s, _ in jobs(h)] == [("capture", "queued"), ("capture", "queued")]
    h.dispatch()
    first = h.job(1)
    h.apply(event(first, 0, MetadataRecord(title="A photo post", has_video=False)))
    assert [k for _, _, k, _, _ in jobs(h)] == ["capture", "capture"], "a photo post: no job"
    h.apply(event(first, 1, MetadataRecord(has_video=True)))
    assert jobs(h)[-1] == (3, 1, "media", "queued", "the page shows a video")
    assert h.one("SELECT media_key FROM media_items") == "twitter:1790000000000000003"


def test_a_post_link_whose_captures_read_no_post_gets_a_media_job_at_the_end(h: Harness) -> None:
    h.apply(post("g1", occ(X_POST)))
    h.dispatch()
    job = h.job(1)
    h.apply(
        event(job, 0, ArchiveResultRecord(status="failed", plugin="x", hook="on_Snapshot__15_x.py",
                                          error_code="E_X_RATE_LIMITED", exit_code=1)),
        done(job, records=1, retry=["x/on_Snapshot__15_x.py"]),
    )  # fmt: skip
    assert [k for _, _, k, _, _ in jobs(h)] == ["capture"], "a retry is coming: no job yet"
    h.policy = replace(h.policy, max_attempts=1)
    h.now = h.now.replace(year=h.now.year + 1)
    h.dispatch()
    job = h.job(1)
    h.apply(
        event(job, 0, ArchiveResultRecord(status="failed", plugin="x", hook="on_Snapshot__15_x.py",
                                          error_code="E_X_NOT_FOUND")),
        done(job, records=1),
    )  # fmt: skip
    assert jobs(h)[-1][2:] == ("media", "queued", "no post was read: the media service looks")
