"""Hook (step 8, post-processing): the article, sanitized, and its plain text for search.

Reads the rendered DOM (`../dom/dom.html`) and the raw HTML (`../fetch/body.html`), each when
present and not an HTTP error page (shared.content.inputs). For a link whose platform's
data a platform plugin turned into `../<platform>/thread.html` (shared.platforms.kept:
Reddit's thread JSON, post and comments), that is the article.
Otherwise the elements each version hides are removed (shared.content.visible), then
trafilatura, readability-lxml and jusText vote on both versions and the candidate the others
agree with most wins (shared.content.article); its text is the search text, and for
reading it is taken again with its images (`illustrated`). Those images are copied into
`images/` (article_images.py: from the browser's WARC where the page loaded them, else
through the address-checked fetch; at most READABLE_MAX_IMAGES, raster types only), then
the article is sanitized with nh3 after its URLs are resolved against the final URL, each
image pointing at its copy and one without a copy dropped
(shared.content.sanitize: the reader view shows this as it is and never loads anything from
the archived site), and written as `article.html`; its plain text
(shared.content.plaintext) is `text.txt` and the Text record that fills the search index.
No article found: the whole page's visible text is indexed instead (and is `text.txt`),
with no `article.html`; no text at all (an image shown alone, a canvas): `skipped`, no
`text.txt`. `readable.json` says which
extractor and source won and the votes. A PDF document (`../fetch/body.pdf`) is its own
article: its pages' text and title (shared.content.pdf; Chromium's PDF viewer holds none of
it). No HTML and no PDF: `skipped`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from article_images import ImageLimits, copy_images

from shared.content.article import Source, extract_article, illustrated, page_text
from shared.content.inputs import read_inputs
from shared.content.pdf import PdfDocument, PdfUnreadable, read_pdf
from shared.content.plaintext import plain_text
from shared.content.sanitize import image_sources, sanitize_html
from shared.hooks.config import hook_settings
from shared.hooks.records import ArchiveResultRecord, TextRecord, emit
from shared.platforms import kept


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    args, _ = parser.parse_known_args()
    settings = hook_settings(__file__)
    limit = int(settings["READABLE_MAX_TEXT_CHARS"])
    cap = int(settings["READABLE_MAX_HTML_BYTES"])
    tags = int(settings["READABLE_MAX_TAGS"])
    snapshot = Path("..")
    inputs = read_inputs(snapshot, args.url, cap, tags)
    found = kept.find(snapshot, kept.ARTICLE)
    pdf = snapshot / "fetch" / "body.pdf"
    sources = [
        Source(name, html)
        for name, html in (("rendered", inputs.rendered), ("raw", inputs.raw))
        if html is not None
    ]
    info: dict[str, object] = {"final_url": inputs.final_url, "skipped": list(inputs.skipped)}
    if inputs.cut:
        info["cut"] = list(inputs.cut)
    article_html, what = "", "article"
    reading_html = ""  # the article with its images, when they differ (illustrated)
    doc = None
    if pdf.is_file() and found is None:
        doc = _pdf(pdf, int(settings["READABLE_MAX_PDF_PAGES"]), limit or cap, info)
    if found is not None:
        platform, thread = found
        article_html = thread.read_text(encoding="utf-8")
        info.update(extractor=f"{platform}-json", source=platform)
    elif doc is not None:
        article_html = doc.article_html() if doc.paragraphs else ""
        info.update(extractor="pypdf", source="pdf", pages=doc.pages, pages_read=doc.pages_read)
        pages = f"{doc.pages} page" + ("" if doc.pages == 1 else "s")
        what = f"PDF of {pages}" + ("" if doc.paragraphs else " without text")
    elif sources:
        article = extract_article(sources)
        article_html = article.html if article else ""
        if article:
            reading_html = illustrated(article)
            info.update(extractor=article.extractor, source=article.source, votes=article.votes)
    else:
        why = "; ".join(inputs.skipped) or "no HTML captured"
        emit(ArchiveResultRecord(status="skipped", output_str=why))
        return 0
    if article_html:
        text = plain_text(sanitize_html(article_html, inputs.final_url))
        reading = reading_html or article_html
        copies = copy_images(
            image_sources(reading, inputs.final_url),
            ImageLimits(
                int(settings["READABLE_MAX_IMAGES"]),
                int(settings["READABLE_MAX_IMAGE_BYTES"]),
                float(settings["READABLE_IMAGES_SECONDS"]),
            ),
            user_agent=str(settings["USER_AGENT"]),
            allow_private=bool(settings["ALLOW_PRIVATE_TARGETS"]),
            snapshot=snapshot,
        )
        if copies:
            info["images"] = len(copies)
        safe = sanitize_html(reading, inputs.final_url, copies)
        Path("article.html").write_text(safe, encoding="utf-8")
    elif doc is not None:
        text = ""
    else:
        info.update(extractor=None, source="page")
        text = page_text(sources[0].html) if sources else ""
        what = "page text (no article found)"
        if not text.strip():  # an image or a video shown alone, a page drawn on a canvas
            info["words"] = 0
            Path("readable.json").write_text(json.dumps(info, indent=1, ensure_ascii=False))
            emit(ArchiveResultRecord(status="skipped", output_str="no text on the page"))
            return 0
    Path("text.txt").write_text(text, encoding="utf-8")
    info["words"] = len(text.split())
    Path("readable.json").write_text(json.dumps(info, indent=1, ensure_ascii=False))
    if text and limit:
        emit(TextRecord(text=text[:limit]))
    output = f"{what}, {info['words']} words"
    if inputs.cut:  # the extractors saw only the start of the page
        output += f" (from the start of the page only: {', '.join(inputs.cut)})"
    emit(ArchiveResultRecord(status="succeeded", output_str=output))
    return 0


def _pdf(path: Path, pages: int, max_chars: int, info: dict[str, object]) -> PdfDocument | None:
    """The fetched PDF's text and title, None (the reason in info) when it cannot be read."""
    try:
        return read_pdf(path, pages, max_chars)
    except PdfUnreadable as exc:
        info["pdf_error"] = str(exc)[:300]
        return None


if __name__ == "__main__":
    sys.exit(main())
