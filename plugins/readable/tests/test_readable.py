"""The readable hook as a real process (forked from the test process's hook host, as the
archiver runs it) on the captures of a snapshot folder."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import lxml.html
import pytest

from shared.hooks.records import ArchiveResultRecord, HookRecord, TextRecord, parse_record
from testkit.hook_runs import run_hook
from testkit.httpserver import FixtureServer, Reply

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


def run(
    tmp_path: Path,
    raw: str | None = None,
    rendered: str | None = None,
    final_url: str = "https://news.example/2024/flood.html",
    **env: str,
) -> list[HookRecord]:
    for folder in ("fetch", "dom", "navigate", "readable"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    if raw is not None:
        (tmp_path / "fetch" / "body.html").write_text(raw)
        meta = {"status": 200, "final_url": final_url}
        (tmp_path / "fetch" / "headers.json").write_text(json.dumps(meta))
    if rendered is not None:
        (tmp_path / "dom" / "dom.html").write_text(rendered)
    proc = run_hook(
        HOOK, ["--url=https://news.example/x"], tmp_path / "readable", {**os.environ, **env}
    )
    assert proc.returncode == 0, proc.stderr.decode()
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
        assert a.get("rel") == "noopener noreferrer nofollow ugc" and a.get("target") == "_blank"
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


def test_a_page_without_text_is_skipped_and_keeps_no_empty_text(tmp_path: Path) -> None:
    """The DOM Chromium makes of an image opened alone: nothing to read, no reader view."""
    image = '<html><head></head><body style="margin: 0px;"><img src="https://i.example/p.jpg"></body></html>'
    (result,) = run(tmp_path, rendered=image)
    assert isinstance(result, ArchiveResultRecord) and result.status == "skipped"
    assert result.output_str == "no text on the page"
    assert not (tmp_path / "readable" / "text.txt").exists()
    assert json.loads((tmp_path / "readable" / "readable.json").read_text())["words"] == 0


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
    assert config.artifact_kind("images/3.png") == "article_image"
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


PNG = b"\x89PNG\r\n\x1a\n" + bytes(200)
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>x()</script></svg>'


def illustrated(base: str) -> str:
    figures = (
        f'<figure><img src="/img/a.png" alt="the bridge"><figcaption>Bridge</figcaption></figure>'
        f'<p>{PARAS[0]}<img data-src="{base}/img/b.gif" alt="lazy"></p>'
        '<p><img src="/img/vector.svg" alt="svg"><img src="/img/missing.png" alt="gone">'
        '<img src="/img/huge.png" alt="huge"><img src="/img/a.png" alt="again"></p>'
    )
    return (
        f"<html><body><article><h1>River closes bridge</h1>{figures}"
        + "".join(f"<p>{p}</p>" for p in PARAS[1:])
        + "</article></body></html>"
    )


@pytest.fixture(scope="module")
def images_site() -> Iterator[FixtureServer]:
    with FixtureServer() as server:
        server.routes["/img/a.png"] = Reply(PNG, headers={"Content-Type": "image/png"})
        server.routes["/img/b.gif"] = Reply(
            b"GIF89a" + bytes(50), headers={"Content-Type": "image/gif"}
        )
        server.routes["/img/vector.svg"] = Reply(SVG, headers={"Content-Type": "image/svg+xml"})
        server.routes["/img/huge.png"] = Reply(
            PNG + bytes(5000), headers={"Content-Type": "image/png"}
        )
        yield server


def test_the_article_shows_our_copies_of_its_images(
    tmp_path: Path, images_site: FixtureServer
) -> None:
    """Raster images are copied through the checked fetch and the article points at the
    copies; an SVG, a missing image and one past the byte cap are left out, never linked
    to the site."""
    page = illustrated(images_site.base)
    run(
        tmp_path,
        raw=page,
        final_url=images_site.base + "/2024/flood.html",
        ALLOW_PRIVATE_TARGETS="true",
        READABLE_MAX_IMAGE_BYTES="1000",
    )
    out = tmp_path / "readable"
    root = lxml.html.fragment_fromstring((out / "article.html").read_text(), create_parent="div")
    shown = {img.get("alt"): img.get("src") for img in root.iter("img")}
    assert shown == {"the bridge": "images/1.png", "lazy": "images/2.gif", "again": "images/1.png"}
    assert (out / "images" / "1.png").read_bytes() == PNG
    assert sorted(p.name for p in (out / "images").iterdir()) == ["1.png", "2.gif"]
    assert json.loads((out / "readable.json").read_text())["images"] == 2


def test_images_at_a_refused_address_are_left_out(
    tmp_path: Path, images_site: FixtureServer
) -> None:
    """In production mode the fixture's loopback address is refused: no copy, no image."""
    run(
        tmp_path,
        raw=illustrated(images_site.base),
        final_url=images_site.base + "/2024/flood.html",
        ALLOW_PRIVATE_TARGETS="false",
    )
    out = tmp_path / "readable"
    assert "<img" not in (out / "article.html").read_text()
    assert not (out / "images").exists()


def _browser_warc(
    path: Path, responses: list[tuple[str, bytes, str, bool]], status: str = "200 OK"
) -> None:
    """A browser WARC as the traffic hook leaves it: (url, body, content type, truncated),
    every response with `status`."""
    from io import BytesIO

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        writer = WARCWriter(out, gzip=True)
        for url, body, ctype, cut in responses:
            head = StatusAndHeaders(status, [("Content-Type", ctype)], protocol="HTTP/1.1")
            extra = {"WARC-Truncated": "length"} if cut else None
            writer.write_record(
                writer.create_warc_record(
                    url, "response", payload=BytesIO(body), http_headers=head,
                    warc_headers_dict=extra,
                )
            )  # fmt: skip


def _counting_png(hits: list[object]) -> Callable[[object], Reply]:
    """A route answering a PNG that notes each request in hits."""

    def asked(request: object) -> Reply:
        hits.append(request)
        return Reply(PNG, headers={"Content-Type": "image/png"})

    return asked


def test_images_the_browser_loaded_come_from_its_warc_and_dead_hosts_are_not_asked(
    tmp_path: Path,
) -> None:
    """An image in the browser's WARC is copied from it (its host need not answer again); a
    truncated record is not a copy; an image on a host the egress proxy could not reach is
    not fetched again."""
    hits: list[object] = []
    asked = _counting_png(hits)

    with FixtureServer() as dead:
        dead.routes["/p.jpg"] = asked
        page = (
            "<html><body><article><h1>River closes bridge</h1>"
            f'<figure><img src="/img/a.png" alt="kept"></figure><p>{PARAS[0]}</p>'
            f'<p><img src="/img/cut.png" alt="cut"><img src="{dead.base}/p.jpg" alt="dead"></p>'
            + "".join(f"<p>{p}</p>" for p in PARAS[1:])
            + "</article></body></html>"
        )
        _browser_warc(
            tmp_path / "traffic" / "browser.warc.gz",
            [
                ("https://news.example/img/a.png", PNG, "image/png", False),
                ("https://news.example/img/cut.png", PNG, "image/png", True),
                ("https://news.example/other.css", b"p{}", "text/css", False),
            ],
        )
        (tmp_path / "navigate").mkdir(parents=True, exist_ok=True)
        origin = dead.base.removeprefix("http://")
        failed = [{"url": f"{dead.base}/p.jpg", "origin": origin, "kind": "timeout"}]
        (tmp_path / "navigate" / "navigate.json").write_text(json.dumps({"failed": failed}))
        run(tmp_path, raw=page, ALLOW_PRIVATE_TARGETS="true")
    out = tmp_path / "readable"
    root = lxml.html.fragment_fromstring((out / "article.html").read_text(), create_parent="div")
    shown = {img.get("alt"): img.get("src") for img in root.iter("img")}
    assert shown == {"kept": "images/1.png"}
    assert (out / "images" / "1.png").read_bytes() == PNG
    assert hits == []


def test_an_image_the_browser_was_refused_is_not_asked_again(tmp_path: Path) -> None:
    """The browser's WARC holds a 404 for the image: the page showed none, so the hook
    leaves it out without a second request (the host would answer the same)."""
    hits: list[object] = []
    asked = _counting_png(hits)

    with FixtureServer() as site:
        site.routes["/img/gone.png"] = asked
        page = (
            f'<html><body><article><h1>River closes bridge</h1><figure><img src="/img/gone.png"'
            f' alt="gone"></figure><p>{PARAS[0]}</p>'
            + "".join(f"<p>{p}</p>" for p in PARAS[1:])
            + "</article></body></html>"
        )
        _browser_warc(
            tmp_path / "traffic" / "browser.warc.gz",
            [(f"{site.base}/img/gone.png", b"not found", "text/plain", False)],
            status="404 Not Found",
        )
        run(tmp_path, raw=page, final_url=f"{site.base}/story", ALLOW_PRIVATE_TARGETS="true")
    article = (tmp_path / "readable" / "article.html").read_text()
    assert "<img" not in article
    assert hits == []


def test_a_huge_page_is_read_up_to_the_byte_cap_and_says_so(tmp_path: Path) -> None:
    """READABLE_MAX_HTML_BYTES (5 MiB by default) bounds the extractors' memory: a longer
    page's article is its text up to there, and the output says the page was cut. Shown at a
    512 KiB cap (the same code path; extracting 5 MiB took ~18 s of CPU)."""
    cap = 512 * 1024
    head = "<html><head><title>Long</title></head><body><article>"
    paras, size, i = [], len(head), 0
    while size < cap + cap // 5:
        body = " ".join(PARAS[(i + k) % 3] for k in range(100))  # long paragraphs: few tags
        paras.append(f"<p>Paragraph {i} of the report. {body}</p>")
        size, i = size + len(paras[-1]), i + 1
    page = head + "".join(paras) + "</article></body></html>"
    inside = max(n for n in range(i) if page.index(f"<p>Paragraph {n} ") < cap - 10_000)
    records = run(tmp_path, raw=page, READABLE_MAX_HTML_BYTES=str(cap))
    final = next(r for r in records if isinstance(r, ArchiveResultRecord))
    assert final.status == "succeeded" and final.output_str.startswith("article, ")
    assert final.output_str.endswith(f"(from the start of the page only: raw: {cap} bytes)")
    text = (tmp_path / "readable" / "text.txt").read_text()
    assert text.startswith("Paragraph 0 of the report.")
    assert f"Paragraph {inside} of the report." in text
    assert f"Paragraph {i - 1} of the report." not in text
    info = json.loads((tmp_path / "readable" / "readable.json").read_text())
    assert info["cut"] == [f"raw: {cap} bytes"]
