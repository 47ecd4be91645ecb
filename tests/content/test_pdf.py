"""A linked PDF's text and information (shared.content.pdf, pypdf)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.content.pdf import PdfUnreadable, read_pdf
from testkit.pdfdoc import pdf_document

PAGE_1 = [
    "Quarterly report",
    "Revenue fell by twelve percent in the third quarter, the board said on",
    "Tuesday, after two years of growth.",
    "Costs rose because of the new plant (see annex).",
]
PAGE_2 = ["Outlook", "The board expects a recovery next year."]


def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "body.pdf"
    path.write_bytes(data)
    return path


def test_pages_become_paragraphs_and_the_information_is_read(tmp_path: Path) -> None:
    info = {
        "Title": "Q3 report (draft)",
        "Author": "Jane Roe",
        "CreationDate": "D:20240312093000+01'00'",
    }
    doc = read_pdf(write(tmp_path, pdf_document([PAGE_1, PAGE_2], info)))
    assert (doc.pages, doc.pages_read) == (2, 2)
    assert (doc.title, doc.author, doc.created) == (
        "Q3 report (draft)",
        "Jane Roe",
        "2024-03-12T09:30:00",
    )
    assert doc.paragraphs == (
        "Quarterly report",
        "Revenue fell by twelve percent in the third quarter, the board said on Tuesday, after"
        " two years of growth.",
        "Costs rose because of the new plant (see annex).",
        "Outlook",
        "The board expects a recovery next year.",
    )
    html = doc.article_html()
    assert html.startswith("<article><h1>Q3 report (draft)</h1>") and "<p>Outlook</p>" in html


def test_limits_and_a_date_alone(tmp_path: Path) -> None:
    pages = [[f"Page {i} says something."] for i in range(5)]
    doc = read_pdf(
        write(tmp_path, pdf_document(pages, {"CreationDate": "D:20190503"})), max_pages=2
    )
    assert (doc.pages, doc.pages_read, doc.created, doc.title) == (5, 2, "2019-05-03", None)
    assert read_pdf(write(tmp_path, pdf_document(pages)), max_chars=30).paragraphs == (
        "Page 0 says something.",
        "Page 1 s",
    )


@pytest.mark.parametrize(
    "data",
    [
        b"<html>not a pdf</html>",
        b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog",
        b"%PDF-" + bytes(range(256)),
    ],
    ids=["html", "cut-short", "garbage"],
)
def test_what_is_not_a_readable_pdf_says_so(tmp_path: Path, data: bytes) -> None:
    with pytest.raises(PdfUnreadable):
        read_pdf(write(tmp_path, data))
