"""A link's videos on its page and JSON twin, and the `video` badge of the listing: the same
video under two URLs is downloaded once, and both links show it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from services.writer.db import open_db
from shared.hooks.records import (
    ArchiveResultRecord,
    ArtifactRecord,
    HookRecord,
    MediaRecord,
    ProgressRecord,
)
from testkit.writer_harness import Harness, done, event, occ, post

FETCH = "on_Snapshot__41_fetch.py"
MEDIA = "on_Snapshot__63_media.bg.py"
WATCH = "https://www.youtube.com/watch?v=dQw4w9WgXcQ"
SHORT = "https://youtu.be/dQw4w9WgXcQ?t=42"
PENDING = "https://vimeo.com/76979871"
EPISODE = "https://feeds.example/podcast/ep-12.mp3"


def _file(kind: str, path: str, ctype: str) -> ArtifactRecord:
    return ArtifactRecord(plugin="media", kind=kind, path=path, s3_key=f"m/{path}",
                          content_type=ctype, bytes=2048, sha256="0" * 64)  # fmt: skip


def _result(hook: str, status: str) -> ArchiveResultRecord:
    plugin = hook.split("_")[-1].split(".")[0]
    return ArchiveResultRecord(status=status, plugin=plugin, hook=hook)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("videos")
    h = Harness(open_db(data / "archive.sqlite3"))
    h.policy = replace(h.policy, media_jobs=True)
    h.apply(post("g1", occ(WATCH), occ(SHORT), occ(PENDING), occ(EPISODE)))
    by_link: dict[tuple[int, str], int] = {}
    for row in h.rows("SELECT id, link_id, kind FROM archive_jobs"):
        by_link[(row["link_id"], row["kind"])] = row["id"]
    h.dispatch()
    for link in (1, 2, 3, 4):  # every page capture worked: the links are listed
        job = h.job(by_link[(link, "capture")])
        h.apply(event(job, 0, _result(FETCH, "succeeded")), done(job, records=1))
    media = h.job(by_link[(1, "media")])
    records: list[HookRecord] = [
        _file("video", "clip.mp4", "video/mp4"),
        _file("thumbnail", "clip.jpg", "image/jpeg"),
        _file("subtitles", "clip.en.vtt", "text/vtt"),
        MediaRecord(platform="youtube", video_id="dQw4w9WgXcQ", title="Never gonna give",
                    uploader="Rick Astley", duration_s=213.0),
        _result(MEDIA, "succeeded"),
    ]  # fmt: skip
    h.apply(*(event(media, i, r) for i, r in enumerate(records)), done(media, records=5))
    episode = h.job(by_link[(4, "media")])
    heard: list[HookRecord] = [
        _file("audio", "ep-12.mp3", "audio/mpeg"),
        MediaRecord(platform="generic", video_id="ep-12", title="Episode 12"),
        _result(MEDIA, "succeeded"),
    ]
    h.apply(*(event(episode, i, r) for i, r in enumerate(heard)), done(episode, records=3))
    vimeo = h.job(by_link[(3, "media")])
    h.apply(event(vimeo, 0, ProgressRecord(downloaded_bytes=1024, total_bytes=4096, percent=25.0)))
    h.conn.close()
    return data


async def test_both_links_show_the_one_download(client: httpx.AsyncClient) -> None:
    for link in (1, 2):  # link 2's own media job was skipped: same video
        body = (await client.get(f"/links/{link}.json")).json()
        assert body["video"] is True
        (video,) = body["videos"]
        assert video["title"] == "Never gonna give" and video["uploader"] == "Rick Astley"
        assert video["status"] == "downloaded" and video["duration_s"] == 213.0
        assert {f["kind"] for f in video["files"]} == {"video", "thumbnail", "subtitles"}
        clip = next(f for f in video["files"] if f["kind"] == "video")
        page = (await client.get(f"/links/{link}", headers={"accept": "text/html"})).text
        assert f'<video controls preload="metadata" src="{clip["url"]}"' in page
        assert "Rick Astley" in page and "3:33" in page and "clip.en.vtt" in page
        assert "<script" not in page.split('id="videos"')[1].split("</section>")[0]


async def test_a_podcast_episode_is_kept_and_played_as_audio(client: httpx.AsyncClient) -> None:
    (episode,) = (await client.get("/links/4.json")).json()["videos"]
    assert (episode["title"], episode["status"]) == ("Episode 12", "downloaded")
    (audio,) = episode["files"]
    page = (await client.get("/links/4", headers={"accept": "text/html"})).text
    section = page.split('id="videos"')[1].split("</section>")[0]
    assert "<h2>Audio</h2>" in section and "<video" not in section
    assert f'<audio controls preload="metadata" src="{audio["url"]}"></audio>' in section


async def test_a_download_in_progress_shows_its_progress_and_no_player(
    client: httpx.AsyncClient,
) -> None:
    body = (await client.get("/links/3.json")).json()
    assert body["video"] is False
    (video,) = body["videos"]
    assert video["status"] == "pending" and video["percent"] == 25.0 and video["files"] == []
    page = (await client.get("/links/3", headers={"accept": "text/html"})).text
    assert "25 %" in page and "<video" not in page


async def test_the_listing_badges_links_with_a_downloaded_video(client: httpx.AsyncClient) -> None:
    links = {link["id"]: link for link in (await client.get("/index.json")).json()["links"]}
    assert {i: link["video"] for i, link in links.items()} == {1: True, 2: True, 3: False, 4: True}
    home = (await client.get("/", headers={"accept": "text/html"})).text
    assert home.count('class="badge badge-video"') == 2
    assert home.count('class="badge badge-audio"') == 1, "a podcast's episode is audio"
    hits = (await client.get("/search.json", params={"q": "astley", "has_video": "yes"})).json()
    assert {hit["link_id"] for hit in hits["results"]} == {1, 2}  # link 2 by the shared video
