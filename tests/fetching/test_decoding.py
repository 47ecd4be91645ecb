"""Bounded decoding and sniffing, in-process."""

from __future__ import annotations

import gzip
import zlib

import pytest

from shared.fetching.decoding import BoundedDecoder, CompressionBomb, UnsupportedEncoding
from shared.fetching.sniffing import sniff


def decode(coding: str, data: bytes, step: int = 7) -> bytes:
    d = BoundedDecoder(coding, max_ratio=100)
    out = b"".join(p for i in range(0, len(data), step) for p in d.feed(data[i : i + step]))
    return out + d.flush()


def test_gzip_members_deflate_and_raw_deflate_decode() -> None:
    text = b"hello world " * 500
    assert decode("gzip", gzip.compress(text) + gzip.compress(b"!")) == text + b"!"
    assert decode("deflate", zlib.compress(text)) == text
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    assert decode("deflate", raw.compress(text) + raw.flush()) == text
    assert decode("identity", text) == text


def test_bomb_stops_after_a_bounded_amount_of_output() -> None:
    bomb = gzip.compress(b"\0" * 16 * 1024 * 1024)
    d = BoundedDecoder("gzip", max_ratio=100)
    produced = 0
    with pytest.raises(CompressionBomb):
        for piece in d.feed(bomb):
            produced += len(piece)
    assert produced <= 2 * 1024 * 1024


def test_unknown_encoding_is_refused() -> None:
    with pytest.raises(UnsupportedEncoding):
        BoundedDecoder("br", max_ratio=100)


@pytest.mark.parametrize(
    ("declared", "head", "effective", "page"),
    [
        ("text/html; charset=utf-8", b"<!DOCTYPE html><html>", "text/html", True),
        ("text/html", b"PK\x03\x04rest", "application/zip", False),
        ("application/octet-stream", b"\n <html><body>", "text/html", True),
        ("", b"%PDF-1.7", "application/pdf", True),
        ("text/plain", b"\x00\x01\x02\x03", "application/octet-stream", False),
        ("image/png", b"\x89PNG\r\n\x1a\n", "image/png", False),
        ("video/mp4", b"\x00\x00\x00\x18ftypmp42", "video/mp4", False),
        ("application/json", b'{"a": 1}', "application/json", True),
    ],
)
def test_sniffing(declared: str, head: bytes, effective: str, page: bool) -> None:
    s = sniff(declared, head)
    assert (s.effective, s.is_page) == (effective, page)
