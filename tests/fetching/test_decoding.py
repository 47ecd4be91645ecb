"""Bounded decoding and sniffing, in-process."""

from __future__ import annotations

import gzip
import zlib

import brotlicffi
import pytest
from backports import zstd

from shared.fetching.decoding import (
    BoundedDecoder,
    CompressionBomb,
    CorruptEncoding,
    UnsupportedEncoding,
)
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
        BoundedDecoder("compress", max_ratio=100)


def test_brotli_zstd_and_stacks_decode() -> None:
    text = b"hello world " * 5000
    assert decode("br", brotlicffi.compress(text)) == text
    frames = zstd.compress(text) + zstd.compress(b"!")
    assert decode("zstd", frames) == text + b"!"
    assert decode("gzip, br", brotlicffi.compress(gzip.compress(text))) == text
    assert decode("br", brotlicffi.compress(text), step=1 << 20) == text


BOMB = 64 * 1024 * 1024
"""A body of zeros that small codings squeeze to kilobytes."""


def squeezed(coding: str, data: bytes) -> bytes:
    """`data` in `coding`."""
    if coding == "gzip":
        return gzip.compress(data)
    if coding == "deflate":
        return zlib.compress(data, 9)
    if coding == "zstd":
        return zstd.compress(data)
    inner = gzip.compress(data) if coding == "gzip, br" else data
    return bytes(brotlicffi.compress(inner, quality=5))


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd", "gzip, br"])
def test_every_coding_stops_a_bomb_after_a_bounded_amount_of_output(coding: str) -> None:
    packed = squeezed(coding, b"\0" * BOMB)
    d = BoundedDecoder(coding, max_ratio=100)
    produced, biggest = 0, 0
    with pytest.raises(CompressionBomb):
        for piece in d.feed(packed):
            produced += len(piece)
            biggest = max(biggest, len(piece))
    assert produced <= 2 * 1024 * 1024 + 100 * len(packed)
    assert biggest <= d.piece


def test_without_a_ratio_a_caller_counts_piece_by_piece() -> None:
    """The egress and the warming tap count or read the first bytes and stop: no piece is
    larger than the decoder's piece."""
    packed = squeezed("br", b"\0" * BOMB)
    d = BoundedDecoder("br", piece=1 << 20)
    seen = 0
    for piece in d.feed(packed):
        assert len(piece) <= 1 << 20
        seen += len(piece)
        if seen > 8 << 20:
            break
    assert 8 << 20 < seen <= 9 << 20


@pytest.mark.parametrize(
    ("coding", "body"),
    [
        ("gzip", b"not gzip at all"),
        ("br", b"\xff" * 64),
        ("zstd", b"this is not zstd" * 4),
    ],
)
def test_a_body_its_coding_refuses_is_corrupt(coding: str, body: bytes) -> None:
    with pytest.raises(CorruptEncoding):
        decode(coding, body)


def test_a_zstd_window_over_8_mib_is_refused() -> None:
    big = zstd.compress(b"a" * 100, options={zstd.CompressionParameter.window_log: 27})
    big_frame = zstd.ZstdCompressor(options={zstd.CompressionParameter.window_log: 27})
    data = big_frame.compress(b"x" * (32 << 20), zstd.ZstdCompressor.FLUSH_FRAME)
    assert decode("zstd", big) == b"a" * 100  # a small content size needs no big window
    with pytest.raises(CorruptEncoding):
        decode("zstd", data, step=1 << 16)


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
