"""read_inputs / decode_html: which captures the post-processing hooks use."""

from __future__ import annotations

import json
from pathlib import Path

from shared.content.inputs import cut_markup, decode_html, read_inputs


def test_decoding_follows_header_then_meta_then_utf8_then_cp1252():
    assert decode_html("é".encode("latin-1"), "text/html; charset=ISO-8859-1") == "é"
    assert decode_html(b'<meta charset="windows-1252">\xe9')[-1] == "é"
    assert decode_html("é".encode()) == "é"
    assert decode_html(b"\xe9") == "é"
    assert decode_html(b'<meta charset="no-such">ok') == '<meta charset="no-such">ok'


def _write(root: Path, rel: str, data: bytes | dict) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(json.dumps(data).encode() if isinstance(data, dict) else data)


def test_sources_final_url_and_error_pages(tmp_path: Path):
    assert read_inputs(tmp_path, "https://a/") == read_inputs(tmp_path, "https://a/")
    empty = read_inputs(tmp_path, "https://a/")
    assert (empty.raw, empty.rendered, empty.final_url) == (None, None, "https://a/")
    _write(tmp_path, "fetch/body.html", b"<p>raw</p>")
    _write(tmp_path, "fetch/headers.json", {"status": 200, "final_url": "https://a/raw"})
    _write(tmp_path, "dom/dom.html", "<p>dom é</p>".encode())
    _write(tmp_path, "navigate/navigate.json", {"status": 200, "final_url": "https://a/nav"})
    got = read_inputs(tmp_path, "https://a/")
    assert got.raw == "<p>raw</p>" and got.rendered == "<p>dom é</p>"
    assert got.final_url == "https://a/nav"  # the browser's final URL first
    _write(tmp_path, "navigate/navigate.json", {"status": 503, "final_url": "https://a/nav"})
    _write(tmp_path, "fetch/headers.json", {"status": 404, "final_url": "https://a/raw"})
    got = read_inputs(tmp_path, "https://a/")
    assert got.raw is None and got.rendered is None
    assert got.skipped == ("rendered: HTTP 503", "raw: HTTP 404")


def test_reddit_page_replaces_the_raw_body(tmp_path: Path):
    _write(tmp_path, "fetch/body.html", b"<p>www shell</p>")
    _write(tmp_path, "reddit/page.html", b"<p>old reddit</p>")
    assert read_inputs(tmp_path, "https://www.reddit.com/r/a/").raw == "<p>old reddit</p>"


def test_each_source_is_cut_after_max_tags(tmp_path: Path) -> None:
    (tmp_path / "dom").mkdir()
    (tmp_path / "dom" / "dom.html").write_text("<p>a</p>" * 10)
    (tmp_path / "fetch").mkdir()
    (tmp_path / "fetch" / "body.html").write_text("<p>b</p>")
    got = read_inputs(tmp_path, "https://a/", max_tags=5)
    assert got.rendered == "<p>a</p><p>a</p><p>a"
    assert got.raw == "<p>b</p>"
    assert got.cut == ("rendered: 5 tags",)
    assert cut_markup("no tags", 0) == "no tags"
    assert cut_markup("<a>", 0) == ""
