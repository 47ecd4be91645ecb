"""A linked PDF document as text: its pages' text and its document information (pypdf).

Forums link papers, court filings and reports as PDFs. The fetch plugin keeps the file
(`body.pdf`); Chromium shows it in its PDF viewer, whose screenshot, print and DOM hold
nothing of the document. So the reader view and the search index take the PDF's own text:
each page's text, cut into paragraphs at blank lines and after a line that ends a sentence
or stops short (a heading) when the next starts like a new one, and the title, author and
creation date from the document information. Bounded: at most `max_pages` pages and
`max_chars` characters are read (a hostile file also meets the hook's memory and CPU limits).
"""

from __future__ import annotations

import html
import logging
import re
from dataclasses import dataclass
from pathlib import Path

from pypdf import PdfReader
from pypdf.errors import PyPdfError

from shared.fetching.sniffing import SNIFF_BYTES, detect

_PARAGRAPH_END = re.compile(r"[.!?:;]['\")\]]?$")
_PDF_DATE = re.compile(r"^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?")


class PdfUnreadable(Exception):
    """The file is not a PDF pypdf can read."""


@dataclass(frozen=True)
class PdfDocument:
    """What a PDF says about itself."""

    paragraphs: tuple[str, ...]
    pages: int
    """Pages in the document (all of them, also those past `max_pages`)."""
    pages_read: int
    title: str | None = None
    author: str | None = None
    created: str | None = None
    """The creation date as ISO 8601 (a date, or a UTC-less timestamp as written)."""

    def article_html(self) -> str:
        """The document as article HTML: its title as a heading, then its paragraphs."""
        head = f"<h1>{html.escape(self.title)}</h1>\n" if self.title else ""
        body = "\n".join(f"<p>{html.escape(p)}</p>" for p in self.paragraphs)
        return f"<article>{head}{body}</article>"


def read_pdf(path: Path, max_pages: int = 300, max_chars: int = 2_000_000) -> PdfDocument:
    """The text and information of the PDF at path (PdfUnreadable if it is not one)."""
    with path.open("rb") as f:
        if detect(f.read(SNIFF_BYTES).lstrip()) != "application/pdf":
            raise PdfUnreadable("not a PDF file")
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings are about the file
    try:
        reader = PdfReader(path, strict=False)
        if reader.is_encrypted:
            reader.decrypt("")  # most "encrypted" PDFs only restrict printing or copying
        pages = len(reader.pages)
        paragraphs: list[str] = []
        chars = read = 0
        for page in reader.pages[:max_pages]:
            read += 1
            for paragraph in _paragraphs(page.extract_text() or ""):
                paragraphs.append(paragraph[: max_chars - chars])
                chars += len(paragraphs[-1])
                if chars >= max_chars:
                    break
            if chars >= max_chars:
                break
        info = reader.metadata
    except (PyPdfError, ValueError, KeyError, TypeError, IndexError, NotImplementedError) as exc:
        raise PdfUnreadable(f"{type(exc).__name__}: {exc}") from exc
    return PdfDocument(
        paragraphs=tuple(paragraphs),
        pages=pages,
        pages_read=read,
        title=_clean(info.title) if info else None,
        author=_clean(info.author) if info else None,
        created=_pdf_date(info.get("/CreationDate")) if info else None,
    )


def _paragraphs(text: str) -> list[str]:
    """A page's text as paragraphs: blank lines part them, and so does a line that ends a
    sentence or falls short of the page's longest lines (a heading, a paragraph's last
    line) followed by one that starts with a capital or a digit."""
    out: list[str] = []
    lines: list[str] = []
    page = [" ".join(raw.split()) for raw in text.splitlines()]
    short = 0.6 * max((len(line) for line in page), default=0)
    for line in page:
        starts_new = bool(line) and (line[0].isupper() or line[0].isdigit())
        ends = lines and (_PARAGRAPH_END.search(lines[-1]) or len(lines[-1]) < short)
        if lines and (not line or (starts_new and ends)):
            out.append(" ".join(lines))
            lines = []
        if line:
            lines.append(line)
    if lines:
        out.append(" ".join(lines))
    return out


def _clean(value: object) -> str | None:
    text = " ".join(str(value).split()) if value is not None else ""
    return text or None


def _pdf_date(value: object) -> str | None:
    """A PDF date (D:YYYYMMDDHHmmSS...) as ISO 8601, as precise as it is written."""
    match = _PDF_DATE.match(str(value or "").strip())
    if not match:
        return None
    year, month, day, hour, minute, second = match.groups()
    if not (month and day):
        return year
    date = f"{year}-{month}-{day}"
    return f"{date}T{hour}:{minute or '00'}:{second or '00'}" if hour else date
