"""The metadata hook as a real process (forked from the test process's hook host, as the
archiver runs it) on the captures of a snapshot folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

from shared.hooks.records import ArchiveResultRecord, HookRecord, MetadataRecord, parse_record
from testkit.hook_runs import run_hook

HOOK = Path(__file__).resolve().parents[1] / "on_Snapshot__81_metadata.py"

RAW = b"""<!doctype html><html lang="en"><head><title> Fallback  title </title>
<meta property="og:title" content="The OG title"><meta name="description" content="Desc.">
<meta property="article:published_time" content="2026-01-02T03:04:05Z">
<meta name="author" content="Ann Author"><link rel="canonical" href="/story">
<meta property="og:site_name" content="Site"></head><body><p>x</p></body></html>"""
RENDERED = b"""<html lang="en-GB"><head><title>Rendered title</title>
<script type="application/ld+json">{"@type": "NewsArticle", "headline": "Rendered title",
"author": {"@type": "Person", "name": "Rita Render"}}</script></head><body></body></html>"""
WALL = b"""<html><head><title>Log in to continue</title></head><body>Sign in</body></html>"""


def run(
    tmp_path: Path,
    raw: bytes | None = None,
    rendered: bytes | None = None,
    raw_status: int = 200,
) -> list[HookRecord]:
    for folder in ("fetch", "dom", "navigate", "metadata"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    if raw is not None:
        (tmp_path / "fetch" / "body.html").write_bytes(raw)
        headers = {"status": raw_status, "final_url": "https://news.example/a?x=1"}
        (tmp_path / "fetch" / "headers.json").write_text(json.dumps(headers))
    if rendered is not None:
        (tmp_path / "dom" / "dom.html").write_bytes(rendered)
        nav = {"status": 200, "final_url": "https://news.example/a"}
        (tmp_path / "navigate" / "navigate.json").write_text(json.dumps(nav))
    proc = run_hook(HOOK, ["--url=https://news.example/a"], tmp_path / "metadata", os.environ, 60)
    assert proc.returncode == 0, proc.stderr.decode()
    return [parse_record(line) for line in proc.stdout.splitlines() if line.strip()]


def meta_of(records: list[HookRecord]) -> MetadataRecord:
    return next(r for r in records if isinstance(r, MetadataRecord))


def test_raw_only(tmp_path: Path) -> None:
    records = run(tmp_path, raw=RAW)
    meta = meta_of(records)
    assert meta.title == "The OG title" and meta.description == "Desc."
    assert meta.published_at and meta.published_at.startswith("2026-01-02")
    assert meta.site_name == "Site" and meta.language == "en" and meta.author == "Ann Author"
    assert records[-1] == ArchiveResultRecord(status="succeeded", output_str="The OG title")
    saved = json.loads((tmp_path / "metadata" / "metadata.json").read_text())
    assert saved["canonical_url"] == "https://news.example/story"
    assert saved["favicon"] == "https://news.example/favicon.ico"


def test_rendered_wins_and_raw_fills_the_gaps(tmp_path: Path) -> None:
    meta = meta_of(run(tmp_path, raw=RAW, rendered=RENDERED))
    assert meta.title == "Rendered title" and meta.author == "Rita Render"
    assert meta.language == "en-GB"
    assert meta.description == "Desc." and meta.site_name == "Site"
    saved = json.loads((tmp_path / "metadata" / "metadata.json").read_text())
    assert saved["sources"]["raw"]["title"] == "The OG title"


def test_a_rendered_login_wall_loses_to_the_raw_page(tmp_path: Path) -> None:
    meta = meta_of(run(tmp_path, raw=RAW, rendered=WALL))
    assert meta.title == "The OG title"
    saved = json.loads((tmp_path / "metadata" / "metadata.json").read_text())
    assert saved["rendered_is_wall"] is True


def test_an_http_error_page_is_not_described(tmp_path: Path) -> None:
    error_page = b"<html><head><title>503 Service Unavailable</title></head></html>"
    (result,) = run(tmp_path, raw=error_page, raw_status=503)
    assert isinstance(result, ArchiveResultRecord)
    assert result.status == "skipped" and "HTTP 503" in result.output_str


def test_nothing_captured_is_skipped(tmp_path: Path) -> None:
    (result,) = run(tmp_path)
    assert isinstance(result, ArchiveResultRecord) and result.status == "skipped"


def test_reddit_says_which_post_is_a_video(tmp_path: Path) -> None:
    (tmp_path / "reddit").mkdir()
    post = {"title": "Clip of the day", "author": "op", "site_name": "r/t", "has_video": True}
    (tmp_path / "reddit" / "meta.json").write_text(json.dumps(post))
    meta = meta_of(run(tmp_path, raw=RAW))  # the page itself shows no video
    assert meta.title == "Clip of the day" and meta.has_video is True
    post["has_video"] = False
    (tmp_path / "reddit" / "meta.json").write_text(json.dumps(post))
    assert meta_of(run(tmp_path, raw=RAW)).has_video is False


def test_a_pdf_documents_own_information_wins_over_its_viewer(tmp_path: Path) -> None:
    from testkit.pdfdoc import pdf_document

    info = {"Title": "Report 2024", "Author": "Jane Roe", "CreationDate": "D:20240312"}
    (tmp_path / "fetch").mkdir(parents=True)
    (tmp_path / "fetch" / "body.pdf").write_bytes(pdf_document([["Text"]], info))
    meta = meta_of(run(tmp_path, rendered=b"<html><head><title>report.pdf</title></head></html>"))
    assert (meta.title, meta.author, meta.published_at) == ("Report 2024", "Jane Roe", "2024-03-12")


def test_a_pdf_alone_without_a_browser(tmp_path: Path) -> None:
    from testkit.pdfdoc import pdf_document

    (tmp_path / "fetch").mkdir(parents=True)
    (tmp_path / "fetch" / "body.pdf").write_bytes(pdf_document([["Text"]], {"Title": "Only"}))
    assert meta_of(run(tmp_path)).title == "Only"


def test_a_platform_post_wins_over_the_login_wall_the_browser_saw(tmp_path: Path) -> None:
    from shared.platforms.post import Author, Post

    (tmp_path / "x").mkdir()
    post = Post(platform="x", post_id="1", url="https://x.com/ada_example/status/1",
                author=Author(name="Ada Example", handle="ada_example"), text="Harbour at dawn",
                created_at="2024-05-01T09:15:00Z", source="syndication")  # fmt: skip
    (tmp_path / "x" / "post.json").write_text(post.model_dump_json())
    wall = b"<html><head><title>Log in to X / X</title></head><body><form>" + (
        b"<input type=password></form></body></html>"
    )
    meta = meta_of(run(tmp_path, rendered=wall))
    assert meta.title == "Ada Example (@ada_example) on X"
    assert (meta.author, meta.published_at, meta.description) == (
        "Ada Example", "2024-05-01T09:15:00Z", "Harbour at dawn")  # fmt: skip


def test_a_platform_post_alone_names_the_link_when_the_browser_and_fetch_failed(
    tmp_path: Path,
) -> None:
    from shared.platforms.post import Author, Post, PostMedia

    (tmp_path / "bluesky").mkdir()
    post = Post(platform="bluesky", post_id="3k", url="https://bsky.app/profile/a.example/post/3k",
                author=Author(handle="a.example"), text="Rain again", source="appview",
                media=[PostMedia(kind="video", url="https://video.example/a.m3u8")])  # fmt: skip
    (tmp_path / "bluesky" / "post.json").write_text(post.model_dump_json())
    meta = meta_of(run(tmp_path))
    assert (meta.title, meta.description, meta.has_video) == (
        "a.example on Bluesky", "Rain again", True)  # fmt: skip
