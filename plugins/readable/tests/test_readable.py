"""The readable hook as a real subprocess on the captures of a snapshot folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import lxml.html

from shared.hooks.records import ArchiveResultRecord, HookRecord, TextRecord, parse_record

HOOK = Path(__file__).resolve().parents[1] / "on_Snapshot__82_readable.py"
PARAS = [
    "The river rose by two metres overnight and the old stone bridge was closed to all "
    "traffic before dawn, the county engineers said in a short statement.",
    "Residents of the lower town moved furniture upstairs while volunteers filled sandbags "
    "outside the fire station until the rain finally eased after midnight.",
    "Forecasters expect the water to fall slowly over the weekend, but they warned that "
    "another storm could arrive from the west early next week.",
]
NAV = "".join(f"<li><a href='/n{i}'>Navigation link number {i}</a></li>" for i in range(25))
ARTICLE = (
    "<html><head><title>Flood</title><style>p{}</style></head><body><nav><ul>" + NAV + "</ul>"
    "</nav><article><h1>River closes bridge</h1>"
    + "".join(f"<p>{p}</p>" for p in PARAS)
    + '<p>Photo: <a href="/photos/1" onclick="track()">gallery</a></p>'
    '<script>evil()</script><iframe src="https://ads.example/"></iframe></article>'
    "<footer>Copyright. All rights reserved.</footer></body></html>"
)


def run(tmp_path: Path, raw: str | None = None, rendered: str | None = None) -> list[HookRecord]:
    for folder in ("fetch", "dom", "navigate", "readable"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    if raw is not None:
        (tmp_path / "fetch" / "body.html").write_text(raw)
        meta = {"status": 200, "final_url": "https://news.example/2024/flood.html"}
        (tmp_path / "fetch" / "headers.json").write_text(json.dumps(meta))
    if rendered is not None:
        (tmp_path / "dom" / "dom.html").write_text(rendered)
    proc = subprocess.run(
        [sys.executable, str(HOOK), "--url=https://news.example/x"],
        cwd=tmp_path / "readable",
        capture_output=True,
        timeout=120,
        check=True,
    )
    return [parse_record(line) for line in proc.stdout.splitlines() if line.strip()]


def test_article_is_extracted_sanitized_and_indexed(tmp_path: Path) -> None:
    records = run(tmp_path, raw=ARTICLE, rendered=ARTICLE)
    out = tmp_path / "readable"
    text = next(r for r in records if isinstance(r, TextRecord)).text
    assert text == (out / "text.txt").read_text()
    for p in PARAS:
        assert p in text
    assert "Navigation link number" not in text and "All rights reserved" not in text
    article = (out / "article.html").read_text()
    assert "evil()" not in article and "<iframe" not in article and "onclick" not in article
    links = lxml.html.fragment_fromstring(article, create_parent="div").findall(".//a")
    for a in links:  # resolved against the final URL (fetch's), opened safely
        assert a.get("href", "").startswith("https://news.example/")
        assert a.get("rel") == "noopener noreferrer" and a.get("target") == "_blank"
    info = json.loads((out / "readable.json").read_text())
    assert info["source"] in ("rendered", "raw") and info["extractor"]
    assert info["final_url"] == "https://news.example/2024/flood.html"
    assert isinstance(records[-1], ArchiveResultRecord) and records[-1].status == "succeeded"


def test_no_article_falls_back_to_the_page_text(tmp_path: Path) -> None:
    records = run(tmp_path, raw="<html><body><p>Just a tiny page.</p></body></html>")
    text = next(r for r in records if isinstance(r, TextRecord)).text
    assert text == "Just a tiny page."
    assert not (tmp_path / "readable" / "article.html").exists()
    assert json.loads((tmp_path / "readable" / "readable.json").read_text())["source"] == "page"


def test_reddit_thread_is_the_article(tmp_path: Path) -> None:
    (tmp_path / "reddit").mkdir()
    thread = "<article><h1>Post title</h1><p>Self text.</p><p>u/a: a comment</p></article>"
    (tmp_path / "reddit" / "thread.html").write_text(thread)
    records = run(tmp_path, raw="<html><body>Log in to Reddit</body></html>")
    text = next(r for r in records if isinstance(r, TextRecord)).text
    assert text == "Post title\n\nSelf text.\n\nu/a: a comment"
    assert json.loads((tmp_path / "readable" / "readable.json").read_text())["source"] == "reddit"


def test_nothing_captured_is_skipped(tmp_path: Path) -> None:
    (result,) = run(tmp_path)
    assert isinstance(result, ArchiveResultRecord) and result.status == "skipped"


def test_files_are_declared_as_article_and_text() -> None:
    from shared.capture.artifacts import content_type
    from shared.hooks.config import load_plugin_config

    config = load_plugin_config(HOOK.parent)
    assert config.artifact_kind("article.html") == "article"
    assert config.artifact_kind("text.txt") == "text"
    assert content_type("article.html") == "text/html"
    assert content_type("text.txt") == "text/plain"


def test_a_pdf_document_is_its_own_article(tmp_path: Path) -> None:
    from testkit.pdfdoc import pdf_document

    pages = [["Annual report", *PARAS[0].split(", ")], ["Outlook", PARAS[2]]]
    (tmp_path / "fetch").mkdir(parents=True)
    (tmp_path / "fetch" / "body.pdf").write_bytes(pdf_document(pages, {"Title": "Report 2024"}))
    viewer = "<html><body><embed type='application/pdf' src='about:blank'></body></html>"
    records = run(tmp_path, rendered=viewer)  # what Chromium's PDF viewer leaves in the DOM
    final = next(r for r in records if isinstance(r, ArchiveResultRecord))
    assert final.status == "succeeded" and final.output_str.startswith("PDF of 2 pages, ")
    text = next(r for r in records if isinstance(r, TextRecord)).text
    assert text.startswith("Report 2024\n\nAnnual report\n\n") and "early next week." in text
    info = json.loads((tmp_path / "readable" / "readable.json").read_text())
    assert (info["extractor"], info["source"], info["pages"]) == ("pypdf", "pdf", 2)


def test_an_unreadable_pdf_falls_back_to_the_page(tmp_path: Path) -> None:
    (tmp_path / "fetch").mkdir(parents=True)
    (tmp_path / "fetch" / "body.pdf").write_bytes(b"%PDF-1.4 cut short")
    records = run(tmp_path, rendered=ARTICLE)
    final = next(r for r in records if isinstance(r, ArchiveResultRecord))
    assert final.status == "succeeded" and final.output_str.startswith("article, ")
    info = json.loads((tmp_path / "readable" / "readable.json").read_text())
    assert info["pdf_error"] and info["extractor"] != "pypdf"
