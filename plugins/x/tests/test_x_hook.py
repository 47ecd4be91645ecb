"""The x plugin's hooks as real subprocesses against the local X stand-ins: the API hook
keeps the post (post.json, its images under media/, x.json with every step, x.warc.gz) and
prints it as a Post record; failures end with the chain's code; the page hook reads the
browser's capture when no API step found the post."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from shared.hooks.records import ArchiveResultRecord, HookRecord, PostRecord
from testkit.platform_data import X_IDS
from testkit.platform_pages import LOGIN_PAGE
from testkit.platform_server import PlatformServer, run_hook


@pytest.fixture(scope="module")
def server() -> Iterator[PlatformServer]:
    with PlatformServer() as s:
        yield s


def link(case: str) -> str:
    return f"https://x.com/ada_example/status/{X_IDS[case]}"


def result(records: list[HookRecord]) -> ArchiveResultRecord:
    return [r for r in records if isinstance(r, ArchiveResultRecord)][-1]


def test_the_post_its_images_and_every_step_are_kept(
    server: PlatformServer, tmp_path: Path
) -> None:
    cwd = tmp_path / "x"
    code, records, _ = run_hook("x", "x", link("four_images"), cwd, server)
    assert code == 0 and result(records).status == "succeeded"
    assert "post via syndication" in result(records).output_str
    posts = [r for r in records if isinstance(r, PostRecord)]
    assert len(posts) == 1 and posts[0].file == "post.json"
    kept = json.loads((cwd / "post.json").read_text())
    assert kept["post_id"] == X_IDS["four_images"] and len(kept["media"]) == 4
    assert "views" not in kept["counts"]  # unknown counts are absent
    for item in kept["media"]:
        assert (cwd / item["file"]).read_bytes()[:4] == b"\x89PNG"
    report = json.loads((cwd / "x.json").read_text())
    assert report["source"] == "syndication" and report["attempts"][0]["verdict"] == "present"
    with (cwd / "x.warc.gz").open("rb") as warc:
        urls = [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(warc)
                if r.rec_type == "response"]  # fmt: skip
    assert any("/x/tweet-result" in u for u in urls)  # the images are artifacts of their own


@pytest.mark.parametrize(
    ("case", "code", "exit_code"),
    [("tombstone", "E_X_REMOVED", 0), ("rate_limited", "E_X_RATE_LIMITED", 1),
     ("huge", "E_X_TOO_LARGE", 0), ("login", "E_X_LOGIN_WALL", 0)],
)  # fmt: skip
def test_failures(
    server: PlatformServer, tmp_path: Path, case: str, code: str, exit_code: int
) -> None:
    rc, records, _ = run_hook("x", "x", link(case), tmp_path / "x", server)
    assert rc == exit_code and result(records).status == "failed"
    assert result(records).error_code == code
    assert not (tmp_path / "x" / "post.json").exists()
    assert json.loads((tmp_path / "x" / "x.json").read_text())["verdict"] in ("gone", "unknown")


def test_the_operators_cookies_are_counted_never_written(
    server: PlatformServer, tmp_path: Path
) -> None:
    cookies = tmp_path / "cookies"
    cookies.mkdir()
    (cookies / "x.com.txt").write_text(
        "# Netscape HTTP Cookie File\n.x.com\tTRUE\t/\tTRUE\t0\tauth_token\tsecret-token-abcdef\n"
    )
    rc, records, stderr = run_hook("x", "x", link("login"), tmp_path / "x", server,
                                   COOKIES_DIR=str(cookies))  # fmt: skip
    # the API steps send no cookies: a wall there is no expired session
    assert result(records).error_code == "E_X_LOGIN_WALL" and rc == 0
    report = (tmp_path / "x" / "x.json").read_text()
    assert '"count": 1' in report and "secret-token-abcdef" not in report + stderr


def test_not_a_post_link_is_skipped(server: PlatformServer, tmp_path: Path) -> None:
    rc, records, _ = run_hook("x", "x", "https://x.com/ada_example", tmp_path / "x", server)
    assert rc == 0 and result(records).status == "skipped"


def capture(snapshot: Path, html: str, final_url: str, status: int = 200, cookies: int = 0) -> None:
    (snapshot / "dom").mkdir(parents=True)
    (snapshot / "dom" / "dom.html").write_text(html)
    (snapshot / "navigate").mkdir()
    nav = {"final_url": final_url, "status": status,
           "cookies": {"site": "x.com", "count": cookies} if cookies else None}  # fmt: skip
    (snapshot / "navigate" / "navigate.json").write_text(json.dumps(nav))


def test_the_page_hook_reads_the_browser_capture(server: PlatformServer, tmp_path: Path) -> None:
    page = (f'<html><head><meta property="og:title" content="Ada Example on X: &quot;hi&quot;">'
            f'<meta property="og:description" content="Reading about archives today">'
            f'<meta property="og:image" content="{server.base}/media/photo1.png"></head>'
            "<body><article>Reading about archives today</article></body></html>")  # fmt: skip
    capture(tmp_path, page, link("normal"))
    rc, records, _ = run_hook("x", "x_page", link("normal"), tmp_path / "x", server)
    assert rc == 0 and result(records).status == "succeeded"
    kept = json.loads((tmp_path / "x" / "post.json").read_text())
    assert kept["source"] == "browser" and kept["author"]["name"] == "Ada Example"
    assert (tmp_path / "x" / kept["media"][0]["file"]).is_file()
    rc, records, _ = run_hook("x", "x_page", link("normal"), tmp_path / "x", server)
    assert (
        rc == 0
        and result(records).status == "skipped"
        and "came from browser" in result(records).output_str
    )


def test_the_page_hook_records_a_wall(server: PlatformServer, tmp_path: Path) -> None:
    capture(tmp_path, LOGIN_PAGE, "https://x.com/i/flow/login")
    rc, records, _ = run_hook("x", "x_page", link("normal"), tmp_path / "x", server)
    assert rc == 0 and result(records).error_code == "E_X_LOGIN_WALL"
    assert not (tmp_path / "x" / "post.json").exists()


def test_the_page_hook_calls_a_wall_behind_sent_cookies_logged_out(
    server: PlatformServer, tmp_path: Path
) -> None:
    capture(tmp_path, LOGIN_PAGE, "https://x.com/i/flow/login", cookies=2)
    rc, records, _ = run_hook("x", "x_page", link("normal"), tmp_path / "x", server)
    assert rc == 0 and result(records).error_code == "E_X_LOGGED_OUT"
