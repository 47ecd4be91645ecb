"""The media hook as a real process (forked from the test process's hook host, as the
archiver runs it; real yt-dlp and ffmpeg) against local fixtures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.hooks.records import (
    ArchiveResultRecord,
    HookRecord,
    MediaRecord,
    ProgressRecord,
    parse_record,
)
from testkit.hook_runs import run_hook
from testkit.mediaserver import MediaServer, Served, make_audio, make_clip, make_hls

pytestmark = pytest.mark.integration
HOOK = Path(__file__).resolve().parents[1] / "on_Snapshot__63_media.bg.py"
SESSION = "members-session-5e8a1c"
"""The site's login cookie (a video behind it: the server answers 403 without)."""
VTT = (
    b"WEBVTT\n\n00:00.000 --> 00:01.000\nhello <b>archive</b>\n\n"
    b"00:01.000 --> 00:02.000\nhello archive\n\n00:01.500 --> 00:02.000\nthe second line\n"
)


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_clip(tmp_path_factory.mktemp("clip") / "clip.mp4")


@pytest.fixture(scope="module")
def site(clip: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MediaServer]:
    hls = make_hls(clip, tmp_path_factory.mktemp("hls"))
    data = clip.read_bytes()
    with MediaServer("127.0.0.2") as s:
        s.routes["/clip.mp4"] = Served(data, "video/mp4")
        s.routes["/clip.en.vtt"] = Served(VTT, "text/vtt")
        s.routes["/video.html"] = Served(
            b"<html><head><title>A page with a video</title></head><body>"
            b'<video src="/clip.mp4"><track kind="subtitles" srclang="en" src="/clip.en.vtt">'
            b"</video></body></html>"
        )
        s.routes["/og.html"] = Served(
            b'<html><head><title>OG</title><meta property="og:video" content="/clip.mp4">'
            b'<meta property="og:video:type" content="video/mp4"></head><body>x</body></html>'
        )
        s.routes["/optout.html"] = Served(
            b"<html><head><title>Mine</title></head><body><video src='/clip.mp4'></video>"
            b"</body></html>",
            headers={"X-No-Archive": "yes"},
        )
        s.routes["/optmeta.html"] = Served(
            b'<html><head><meta http-equiv="X-No-Archive" content="1"><title>Mine</title>'
            b"</head><body><video src='/clip.mp4'></video></body></html>"
        )
        s.routes["/optout.mp4"] = Served(data, "video/mp4", headers={"X-No-Archive": "1"})
        login = f"session={SESSION}"
        s.routes["/members/clip.mp4"] = Served(data, "video/mp4", cookie=login)
        s.routes["/members/video.html"] = Served(
            b"<html><head><title>Members' video</title></head><body>"
            b'<video src="/members/clip.mp4"></video></body></html>',
            cookie=login,
        )
        s.routes["/plain.html"] = Served(b"<html><title>text</title><p>no video here</p></html>")
        s.routes["/linked.html"] = Served(
            b"<html><head><title>Our clip</title></head><body><p>Watch"
            b' <a href="/gone.mp4">a clip gone</a>,'
            b' <a href="clip.mp4#t=1">the clip</a>, again <a href="/clip.mp4">here</a>,'
            b' <a href="/optout.mp4">not this one</a>, <a href="/page.html">a page</a>.</p>'
            b"</body></html>"
        )
        episode = make_audio(tmp_path_factory.mktemp("audio") / "ep-12.mp3").read_bytes()
        s.routes["/ep-12.mp3"] = Served(episode, "audio/mpeg")
        s.routes["/episode.html"] = Served(
            b"<html><head><title>Episode 12</title></head><body><h1>Episode 12</h1>"
            b'<audio controls src="/ep-12.mp3"></audio></body></html>'
        )
        s.routes["/dead-link.html"] = Served(
            b'<html><title>x</title><p>Gone: <a href="/gone.mp4">the clip</a></p></html>'
        )
        for f in hls.parent.iterdir():
            ctype = "application/vnd.apple.mpegurl" if f.suffix == ".m3u8" else "video/mp2t"
            s.routes[f"/hls/{f.name}"] = Served(f.read_bytes(), ctype)
        s.routes["/stall.mp4"] = Served(data, "video/mp4", stall_after=len(data) // 3)
        s.routes["/gone.mp4"] = Served(b"gone", "text/plain", status=404)
        s.routes["/busy.mp4"] = Served(
            b"slow down", "text/plain", status=429, headers={"Retry-After": "900"}
        )
        yield s


def run(url: str, cwd: Path, timeout: float = 90, **env: str) -> tuple[int, list[HookRecord]]:
    full = {
        **os.environ,
        "ALLOW_PRIVATE_TARGETS": "true",
        "MEDIA_SOCKET_TIMEOUT": "3",
        "MEDIA_RETRIES": "0",
        "MEDIA_PROGRESS_INTERVAL": "0.01",
        **env,
    }
    proc = run_hook(HOOK, [f"--url={url}", "--snapshot-id=s1"], cwd, full, timeout)
    records = [parse_record(line) for line in proc.stdout.decode().splitlines() if line.strip()]
    return proc.returncode, records


def result(records: list[HookRecord]) -> ArchiveResultRecord:
    return [r for r in records if isinstance(r, ArchiveResultRecord)][-1]


def media(records: list[HookRecord]) -> list[MediaRecord]:
    return [r for r in records if isinstance(r, MediaRecord)]


def names(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def test_video_tag_page_keeps_video_info_subtitles_and_transcript(
    site: MediaServer, clip: Path, tmp_path: Path
) -> None:
    code, records = run(f"{site.base}/video.html", tmp_path)
    assert code == 0, records
    assert result(records).status == "succeeded"
    (m,) = media(records)
    assert m.platform == "html5mediaembed" and m.downloaded
    assert m.transcript == "hello archive\nthe second line"
    files = names(tmp_path)
    videos = [n for n in files if n.endswith(".mp4")]
    assert len(videos) == 1, files
    assert (tmp_path / videos[0]).stat().st_size == clip.stat().st_size
    assert any(n.endswith(".info.json") for n in files)
    assert any(n.endswith(".vtt") for n in files)
    assert not any(".part" in n or n.endswith(".ytdl") for n in files)
    progress = [r for r in records if isinstance(r, ProgressRecord)]
    assert progress and progress[-1].downloaded_bytes >= clip.stat().st_size


def test_og_video_page(site: MediaServer, clip: Path, tmp_path: Path) -> None:
    code, records = run(f"{site.base}/og.html", tmp_path)
    assert code == 0 and result(records).status == "succeeded", records
    (video,) = [p for p in tmp_path.iterdir() if p.suffix == ".mp4"]
    assert video.read_bytes() == clip.read_bytes()


def test_direct_mp4(site: MediaServer, clip: Path, tmp_path: Path) -> None:
    code, records = run(f"{site.base}/clip.mp4", tmp_path)
    assert code == 0 and result(records).status == "succeeded", records
    (m,) = media(records)
    assert m.video_id == "clip"
    assert (tmp_path / "clip.mp4").read_bytes() == clip.read_bytes()
    info = json.loads((tmp_path / "clip.info.json").read_text())
    assert info["id"] == "clip"


def test_hls_playlist_is_downloaded_and_remuxed(site: MediaServer, tmp_path: Path) -> None:
    code, records = run(f"{site.base}/hls/index.m3u8", tmp_path)
    assert code == 0 and result(records).status == "succeeded", records
    (video,) = [p for p in tmp_path.iterdir() if p.suffix == ".mp4"]
    probe = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0",
         str(video)], capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert 1.5 < float(probe.stdout) < 2.6
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".ts" or "Frag" in p.name]


def test_page_without_video_is_a_soft_failure(site: MediaServer, tmp_path: Path) -> None:
    code, records = run(f"{site.base}/plain.html", tmp_path)
    res = result(records)
    assert code == 0 and res.status == "failed" and res.error_code == "E_MEDIA_NO_VIDEO"
    assert not media(records)


def test_a_page_that_links_to_a_media_file_keeps_the_file(
    site: MediaServer, clip: Path, tmp_path: Path
) -> None:
    """yt-dlp reads no `<a href>`, yet a link to a .mp4 gave the page its media job: the
    linked files are downloaded (each once; one that opts out is left alone, one gone does
    not stop the others; all gone, the page's job fails as the file did)."""
    code, records = run(f"{site.base}/linked.html", tmp_path)
    assert code == 0 and result(records).status == "succeeded", records
    (m,) = media(records)
    assert m.video_id == "clip" and m.downloaded
    assert (tmp_path / "clip.mp4").read_bytes() == clip.read_bytes()
    (tmp_path / "dead").mkdir()
    code, records = run(f"{site.base}/dead-link.html", tmp_path / "dead")
    res = result(records)
    assert (code, res.status, res.error_code) == (0, "failed", "E_MEDIA_REMOVED"), records


@pytest.mark.parametrize("path", ["/ep-12.mp3", "/episode.html"])
def test_a_podcast_episode_is_kept_as_audio(site: MediaServer, tmp_path: Path, path: str) -> None:
    """A link to an .mp3, or a page playing one in <audio>: the recording is kept as it is."""
    code, records = run(f"{site.base}{path}", tmp_path)
    assert code == 0 and result(records).status == "succeeded", records
    (m,) = media(records)
    assert m.downloaded
    (kept,) = [p for p in tmp_path.iterdir() if p.suffix == ".mp3"]
    assert kept.read_bytes() == site.routes["/ep-12.mp3"].body


def test_removed_is_soft_and_rate_limit_is_hard(site: MediaServer, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    code, records = run(f"{site.base}/gone.mp4", tmp_path / "a")
    assert code == 0 and result(records).error_code == "E_MEDIA_REMOVED", records
    (tmp_path / "b").mkdir()
    code, records = run(f"{site.base}/busy.mp4", tmp_path / "b")
    assert code == 1 and result(records).error_code == "E_MEDIA_RATE_LIMITED", records
    assert result(records).retry_after_s == 900, "the wait the 429 asked for goes with it"


def test_stalled_server_is_a_hard_failure_without_partial_files(
    site: MediaServer, tmp_path: Path
) -> None:
    code, records = run(f"{site.base}/stall.mp4", tmp_path)
    res = result(records)
    assert code == 1 and res.status == "failed" and res.error_code == "E_MEDIA_NETWORK", res
    assert not [n for n in names(tmp_path) if n.endswith((".mp4", ".part", ".ytdl"))]


def test_larger_than_the_cap_keeps_metadata_only(
    site: MediaServer, clip: Path, tmp_path: Path
) -> None:
    cap = clip.stat().st_size // 2
    code, records = run(f"{site.base}/video.html", tmp_path, MAX_BYTES_HARD_LIMIT=str(cap))
    res = result(records)
    assert code == 0 and res.status == "failed" and res.error_code == "E_MEDIA_TOO_LARGE"
    assert "too_large" in res.output_str
    files = names(tmp_path)
    assert any(n.endswith(".info.json") for n in files), files
    assert not [n for n in files if n.endswith((".mp4", ".part"))], files
    (m,) = media(records)
    assert not m.downloaded and m.transcript == "hello archive\nthe second line"


def test_private_targets_are_refused_without_the_explicit_setting(
    site: MediaServer, tmp_path: Path
) -> None:
    before = len(site.hits)
    code, records = run(f"{site.base}/clip.mp4", tmp_path, ALLOW_PRIVATE_TARGETS="false")
    res = result(records)
    assert code == 0 and res.error_code == "E_MEDIA_REFUSED"
    assert len(site.hits) == before, "no request reached the private address"


def test_the_guard_refuses_a_private_address_reached_after_a_public_check(
    site: MediaServer, tmp_path: Path
) -> None:
    """yt-dlp's own connections are checked: a public-looking start cannot lead to loopback."""
    script = (
        "import sys, yt_dlp; from shared.fetching import socket_guard;"
        "socket_guard.install();"
        "y = yt_dlp.YoutubeDL({'quiet': True});"
        "y.urlopen(sys.argv[1])"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, f"{site.base}/clip.mp4"],
        capture_output=True, text=True, timeout=30, cwd=HOOK.parent,
    )  # fmt: skip
    assert proc.returncode != 0 and "refused target" in proc.stderr


@pytest.mark.parametrize("path", ["/optout.html", "/optmeta.html", "/optout.mp4"])
def test_a_page_that_opts_out_is_not_downloaded(
    site: MediaServer, tmp_path: Path, path: str
) -> None:
    before = len(site.hits)
    code, records = run(site.base + path, tmp_path)
    assert code == 0
    ended = result(records)
    assert (ended.status, ended.error_code) == ("failed", "E_MEDIA_DECLINED")
    assert "asks not to be archived" in ended.output_str
    assert not any(isinstance(r, MediaRecord) for r in records)
    assert [p for p in tmp_path.iterdir() if not p.name.endswith(".stderr.log")] == []
    assert site.hits[before:] == [path]  # the page's first bytes only, never the video


@pytest.mark.parametrize("path", ["/members/video.html", "/members/clip.mp4"])
def test_a_video_behind_the_login_is_downloaded_with_the_sites_cookies(
    site: MediaServer, tmp_path: Path, path: str
) -> None:
    cookies = tmp_path / "cookies"
    cookies.mkdir()
    (cookies / f"{site.host}.txt").write_text(
        f"# Netscape HTTP Cookie File\n{site.host}\tFALSE\t/\tFALSE\t0\tsession\t{SESSION}\n"
    )
    without = tmp_path / "without"
    without.mkdir()
    code, records = run(site.base + path, without)
    assert result(records).status == "failed"  # the site refuses without the login
    out = tmp_path / "out"
    out.mkdir()
    code, records = run(site.base + path, out, COOKIES_DIR=str(cookies))
    assert code == 0 and result(records).status == "succeeded", result(records)
    assert [r for r in records if isinstance(r, MediaRecord) and r.downloaded]
    assert any(p.suffix == ".mp4" for p in out.iterdir())
    for p in out.rglob("*"):  # the cookie value is in nothing the hook wrote
        assert not p.is_file() or SESSION.encode() not in p.read_bytes(), p
    assert SESSION not in "".join(r.model_dump_json() for r in records)
