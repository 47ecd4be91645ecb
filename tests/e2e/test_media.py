"""Media end to end: a forum post links the same video twice (two URLs); the writer makes one
media job, the media service downloads it once with yt-dlp into S3, both links point at it
and read `archived` although their page capture can only say "not a web page"; a page
showing a video gets its own media job from its capture's metadata; the web shows the
video on each link."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from testkit.httpserver import FixtureServer, Reply
from testkit.mediaserver import make_clip
from tests.e2e.conftest import Forum, Running

pytestmark = pytest.mark.integration


def test_the_same_video_under_two_urls_is_downloaded_once(
    forum: Forum, outside_web: FixtureServer, running: Running, tmp_path: Path
) -> None:
    clip = make_clip(tmp_path / "clip.mp4").read_bytes()
    outside_web.routes["/v/clip.mp4"] = Reply(clip, headers={"Content-Type": "video/mp4"})
    outside_web.routes["/watch.html"] = Reply(
        b"<html><head><title>Watch</title></head><body><video src='/v/clip.mp4'></video>"
        b"</body></html>"
    )
    base = outside_web.base
    forum.add(
        201,
        f'<p><a href="{base}/v/clip.mp4">the clip</a>, <a href="{base}/v/clip.mp4?t=1">from 1 s'
        f'</a> and <a href="{base}/watch.html">a page</a></p>',
    )

    def media_done() -> list[tuple[str, int]]:
        try:
            rows = running.query(
                "SELECT status, count(*) FROM archive_jobs WHERE kind = 'media'"
                " AND status NOT IN ('queued', 'running') GROUP BY status ORDER BY status"
            )
        except sqlite3.OperationalError:  # the writer has not created its tables yet
            return []
        return rows if sum(n for _, n in rows) >= 3 else []

    ended = running.wait_for(media_done, 150, "three media jobs decided and finished")
    assert ended == [("skipped_cached", 1), ("succeeded", 2)], ended
    skipped = running.query("SELECT reason FROM archive_jobs WHERE status = 'skipped_cached'")
    assert skipped[0][0].startswith("same video as link")
    # one download for the two URLs of the file: both links point at it
    (item,) = running.query(
        "SELECT id, status FROM media_items WHERE media_key LIKE 'url:%clip.mp4'"
    )
    assert item[1] == "downloaded"
    linked = running.query("SELECT count(*) FROM link_media WHERE media_id = ?", item[0])
    assert linked == [(2,)]
    videos = running.query(
        "SELECT a.sha256, l.canonical_url FROM archive_artifacts a JOIN links l ON l.id = a.link_id"
        " WHERE a.kind = 'video' ORDER BY l.canonical_url"
    )
    digest = hashlib.sha256(clip).hexdigest()
    assert [v[0] for v in videos] == [digest, digest], videos
    assert videos[0][1].endswith("/v/clip.mp4") and videos[1][1].endswith("/watch.html")

    # a link that is the media file: its capture ends E_FETCH_NOT_HTML, its download archives it
    def captures_done() -> list[tuple[str, str | None, str]]:
        rows = running.query(
            "SELECT l.status, l.last_error_code, l.canonical_url FROM links l"
            " WHERE l.canonical_url LIKE '%/v/clip.mp4%' AND NOT EXISTS (SELECT 1 FROM"
            " archive_jobs j WHERE j.link_id = l.id AND j.status IN ('queued', 'running'))"
            " ORDER BY l.canonical_url"
        )
        return rows if len(rows) == 2 else []

    clips = running.wait_for(captures_done, 60, "the clip links' captures ended")
    assert [(status, code) for status, code, _ in clips] == [
        ("archived", "E_FETCH_NOT_HTML"),
        ("archived", "E_FETCH_NOT_HTML"),
    ], clips
    # the web shows the one download on both clip links, as a player, and badges them
    ids = [i for (i,) in running.query(
        "SELECT id FROM links WHERE canonical_url LIKE '%/v/clip.mp4%' ORDER BY id")]  # fmt: skip
    for link_id in ids:
        body = running.http.get(f"{running.web}/links/{link_id}.json", timeout=5).json()
        (video,) = body["videos"]
        assert video["status"] == "downloaded" and body["video"] is True
        player = next(f for f in video["files"] if f["kind"] == "video")
        page = running.http.get(f"{running.web}/links/{link_id}", timeout=5).text
        assert f'<video controls preload="metadata" src="{player["url"]}"' in page
    listed = {link["id"]: link for link in running.index()}
    assert all(listed[i]["video"] for i in ids)
