"""Content-Encoding decoding that cannot be made to allocate without bound.

A few KB of gzip can expand to gigabytes. `BoundedDecoder.feed` inflates at most `PIECE`
bytes at a time and raises `CompressionBomb` once the output passes `min_check` bytes while
being more than `max_ratio` times the compressed input consumed so far.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

PIECE = 256 * 1024
"""Largest piece of output produced per inflate call."""
SUPPORTED = ("gzip", "x-gzip", "deflate", "identity", "")
"""Encodings we ask for (Accept-Encoding) and can decode."""


class CompressionBomb(Exception):
    """The body expands past the allowed ratio."""


class UnsupportedEncoding(Exception):
    """A Content-Encoding we did not ask for and cannot decode."""


class BoundedDecoder:
    """Decodes one body's Content-Encoding incrementally, within a ratio limit."""

    def __init__(self, encoding: str, *, max_ratio: float, min_check: int = 1024 * 1024) -> None:
        codings = [c.strip().lower() for c in encoding.split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        if len(codings) > 1 or (codings and codings[0] not in SUPPORTED):
            raise UnsupportedEncoding(encoding)
        self.coding = codings[0] if codings else "identity"
        self.max_ratio = max_ratio
        self.min_check = min_check
        self.consumed = 0
        self.produced = 0
        self._z: zlib._Decompress | None = self._new()
        self._raw_deflate_tried = False
        self.ended = self._z is None
        """True once the compressed stream reached its end (always for identity)."""

    def _new(self) -> zlib._Decompress | None:
        if self.coding in ("gzip", "x-gzip"):
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        if self.coding == "deflate":
            return zlib.decompressobj()
        return None

    def _check(self) -> None:
        if self.produced > self.min_check and self.produced > self.max_ratio * max(
            1, self.consumed
        ):
            raise CompressionBomb(
                f"{self.consumed} compressed bytes expand to more than {self.produced}"
                f" (over {self.max_ratio:g}:1)"
            )

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Decoded pieces of `data` (each at most PIECE bytes); raises CompressionBomb."""
        if self._z is None:
            self.consumed += len(data)
            self.produced += len(data)
            if data:
                yield data
            return
        pending = data
        while pending and self._z is not None:
            z = self._z
            try:
                out = z.decompress(pending, PIECE)
            except zlib.error:
                if self.coding == "deflate" and not self._raw_deflate_tried and not self.produced:
                    # servers send raw deflate (no zlib header) under "deflate" too
                    self._raw_deflate_tried = True
                    self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise
            rest = z.unused_data if z.eof else z.unconsumed_tail
            self.consumed += len(pending) - len(rest)
            self.produced += len(out)
            if out:
                self._check()
                yield out
            pending = rest
            if z.eof:
                self.ended = True
                if pending.startswith(b"\x1f\x8b") and self.coding != "deflate":
                    self._z, self.ended = self._new(), False  # the next gzip member
                else:
                    pending = b""  # trailing bytes after the stream are ignored

    def flush(self) -> bytes:
        """What is left in the decoder at the end of the body."""
        if self._z is None:
            return b""
        out = self._z.flush(PIECE)
        self.produced += len(out)
        self._check()
        return out
