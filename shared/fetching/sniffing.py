"""Is a response a web page? Decided from its declared Content-Type and its first bytes.

Bytes win over labels: a zip served as text/html is a zip, and HTML served as
application/octet-stream is HTML (the WHATWG MIME sniffing rules, reduced to what an
archive needs: known binary signatures, the HTML tag prefixes, and "no binary bytes").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SNIFF_BYTES = 1024
"""Bytes looked at."""

PAGE_TYPES = frozenset(
    {
        "text/html",
        "application/xhtml+xml",
        "text/plain",
        "application/json",
        "application/ld+json",
        "application/xml",
        "text/xml",
        "application/rss+xml",
        "application/atom+xml",
        "application/pdf",
    }
)
"""Types the fetch keeps as a page (PDF included: forums link papers and manuals)."""

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"PK\x05\x06", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
    (b"BZh", "application/x-bzip2"),
    (b"\xfd7zXZ\x00", "application/x-xz"),
    (b"(\xb5/\xfd", "application/zstd"),
    (b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
    (b"Rar!\x1a\x07", "application/vnd.rar"),
    (b"\x7fELF", "application/x-executable"),
    (b"MZ", "application/x-msdownload"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"\x00\x00\x01\x00", "image/x-icon"),
    (b"OggS", "application/ogg"),
    (b"ID3", "audio/mpeg"),
    (b"fLaC", "audio/flac"),
    (b"\x1aE\xdf\xa3", "video/webm"),
    (b"wOFF", "font/woff"),
    (b"wOF2", "font/woff2"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "application/x-ole-storage"),
)
_HTML_START = re.compile(
    rb"<(!doctype html|html|head|script|iframe|h1|div|font|table|a|style|title|b|body|br|p"
    rb"|!--|meta|link|svg)[\s>/]",
    re.IGNORECASE,
)
_BINARY_BYTES = re.compile(rb"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")


@dataclass(frozen=True)
class Sniffed:
    """What the response is."""

    declared: str
    """Declared media type (lower-case, parameters dropped; '' when absent)."""
    detected: str
    """Type from the bytes: a signature's type, text/html, text/plain, or
    application/octet-stream ('' when nothing could be told)."""
    effective: str
    """The type the archive goes by."""

    @property
    def is_page(self) -> bool:
        """True for a web page or document the fetch keeps."""
        return self.effective in PAGE_TYPES


def media_type(content_type: str) -> str:
    """`text/html; charset=x` -> `text/html`."""
    return content_type.split(";", 1)[0].strip().lower()


def detect(head: bytes) -> str:
    """The type the first bytes show ('' when there are none)."""
    if not head:
        return ""
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if head[4:8] == b"ftyp":
        return "video/mp4"
    if head.startswith(b"RIFF") and head[8:12] in (b"WEBP", b"WAVE", b"AVI "):
        return {b"WEBP": "image/webp", b"WAVE": "audio/wav", b"AVI ": "video/x-msvideo"}[head[8:12]]
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if _HTML_START.match(text + b" "):
        return "text/html"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "text/plain"  # UTF-16 with a BOM
    return "application/octet-stream" if _BINARY_BYTES.search(head) else "text/plain"


def sniff(content_type: str, head: bytes) -> Sniffed:
    """Classify a response from its Content-Type header and its first SNIFF_BYTES bytes."""
    declared = media_type(content_type)
    detected = detect(head[:SNIFF_BYTES])
    if detected and detected not in ("text/plain", "text/html", "application/octet-stream"):
        effective = detected  # a binary signature
    elif detected == "application/octet-stream":
        effective = detected if declared in PAGE_TYPES or not declared else declared
    elif declared in ("", "application/octet-stream", "binary/octet-stream", "unknown/unknown"):
        effective = detected or "application/octet-stream"
    else:
        effective = declared
    return Sniffed(declared, detected, effective)
