"""Content-Encoding decoding that cannot be made to allocate without bound: the one decoder of
outbound traffic (the fetch, the egress proxy's body cap, its warming tap).

A few KB of gzip, brotli or zstd can expand to gigabytes. `BoundedDecoder.feed` decodes at
most `piece` bytes at a time (each coding's own output limit: zlib's `max_length`, brotli's
`output_buffer_limit`, zstd's `max_length`), so a caller that counts or caps what comes out
never holds more than one piece; with `max_ratio` it raises `CompressionBomb` once the output
passes `min_check` bytes while being more than `max_ratio` times the input consumed so far.
Codings: gzip (x-gzip; several members), deflate (zlib-wrapped or raw), br, zstd (several
frames; windows over 8 MiB refused, as Chromium and RFC 9659 do, so a frame cannot make the
decoder allocate a large window), identity, and a stack of them (`gzip, br`: decoded last
applied first, each layer bounded). Anything else is `UnsupportedEncoding`; a body that is not
what its coding says raises `CorruptEncoding`. A caller that stops iterating `feed` part-way
must not feed the decoder again (it is done with the body).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Protocol

import brotlicffi
from backports.zstd import DecompressionParameter, ZstdDecompressor, ZstdError

PIECE = 256 * 1024
"""Default largest piece of output produced per decoding call."""
ASKED = "gzip, deflate"
"""What the fetch asks for (Accept-Encoding): what it decodes without a third-party library
is all it asks; br and zstd sent unasked are decoded all the same."""
ZSTD_MAX_WINDOW_LOG = 23
"""8 MiB: the largest zstd window accepted (RFC 9659's limit for HTTP, Chromium's too)."""
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class CompressionBomb(Exception):
    """The body expands past the allowed ratio."""


class UnsupportedEncoding(Exception):
    """A Content-Encoding this decoder does not know."""


class CorruptEncoding(ValueError):
    """The body is not what its Content-Encoding says (zlib, brotli or zstd refused it)."""


class _Layer(Protocol):
    ended: bool
    consumed: int

    def feed(self, data: bytes, piece: int) -> Iterator[bytes]: ...

    def flush(self, piece: int) -> bytes: ...


class _Zlib:
    """gzip (every member) or deflate (zlib-wrapped, else raw)."""

    def __init__(self, gzip: bool) -> None:
        self.gzip = gzip
        self._z = self._new()
        self._raw_tried = False
        self.ended = False
        self.consumed = 0
        self._produced = 0

    def _new(self) -> zlib._Decompress:
        return zlib.decompressobj(16 + zlib.MAX_WBITS if self.gzip else zlib.MAX_WBITS)

    def feed(self, data: bytes, piece: int) -> Iterator[bytes]:
        pending = data
        while pending:
            z = self._z
            try:
                out = z.decompress(pending, piece)
            except zlib.error as exc:
                if not self.gzip and not self._raw_tried and not self._produced:
                    # servers send raw deflate (no zlib header) under "deflate" too
                    self._raw_tried = True
                    self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise CorruptEncoding(f"zlib: {exc}") from exc
            rest = z.unused_data if z.eof else z.unconsumed_tail
            self.consumed += len(pending) - len(rest)
            self._produced += len(out)
            if out:
                yield out
            pending = rest
            if z.eof:
                self.ended = True
                if pending.startswith(b"\x1f\x8b") and self.gzip:
                    self._z, self.ended = self._new(), False  # the next gzip member
                else:
                    self.consumed += len(pending)
                    pending = b""  # trailing bytes after the stream are ignored

    def flush(self, piece: int) -> bytes:
        try:
            return self._z.flush(piece)
        except zlib.error as exc:
            raise CorruptEncoding(f"zlib: {exc}") from exc


class _Brotli:
    """br, through brotli's own output limit (brotlicffi >= 1.2)."""

    def __init__(self) -> None:
        self._d = brotlicffi.Decompressor()
        self.ended = False
        self.consumed = 0

    def feed(self, data: bytes, piece: int) -> Iterator[bytes]:
        if self.ended:
            self.consumed += len(data)  # trailing bytes after the stream are ignored
            return
        try:
            out = self._d.process(data, output_buffer_limit=piece)
            self.consumed += len(data)
            while True:
                if out:
                    yield out
                if self._d.can_accept_more_data():
                    break
                out = self._d.process(b"", output_buffer_limit=piece)
            self.ended = bool(self._d.is_finished())
        except brotlicffi.error as exc:
            raise CorruptEncoding(f"brotli: {exc}") from exc

    def flush(self, piece: int) -> bytes:
        return b""


class _Zstd:
    """zstd (every frame), its window at most 8 MiB."""

    def __init__(self) -> None:
        self._d = self._new()
        self.ended = False
        self.consumed = 0

    @staticmethod
    def _new() -> ZstdDecompressor:
        limit = {int(DecompressionParameter.window_log_max): ZSTD_MAX_WINDOW_LOG}
        return ZstdDecompressor(options=limit)

    def feed(self, data: bytes, piece: int) -> Iterator[bytes]:
        pending = data
        self.consumed += len(data)
        try:
            while True:
                if self._d.eof:
                    rest = self._d.unused_data + pending
                    if not rest.startswith(ZSTD_MAGIC):
                        return  # trailing bytes after the last frame are ignored
                    self._d, pending, self.ended = self._new(), rest, False
                out = self._d.decompress(pending, piece)
                pending = b""
                self.ended = self._d.eof
                if out:
                    yield out
                if self._d.needs_input and not self._d.eof:
                    return
        except ZstdError as exc:
            raise CorruptEncoding(f"zstd: {exc}") from exc

    def flush(self, piece: int) -> bytes:
        return b""


def _layer(coding: str) -> _Layer:
    if coding in ("gzip", "x-gzip"):
        return _Zlib(gzip=True)
    if coding == "deflate":
        return _Zlib(gzip=False)
    if coding == "br":
        return _Brotli()
    if coding == "zstd":
        return _Zstd()
    raise UnsupportedEncoding(coding)


class BoundedDecoder:
    """Decodes one body's Content-Encoding incrementally, a bounded piece at a time."""

    def __init__(
        self,
        encoding: str,
        *,
        max_ratio: float | None = None,
        min_check: int = 1024 * 1024,
        piece: int = PIECE,
    ) -> None:
        codings = [c.strip().lower() for c in encoding.split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        # the last coding listed was applied last: it is undone first
        self._layers = [_layer(c) for c in reversed(codings)]
        self.coding = ", ".join(codings) or "identity"
        self.max_ratio = max_ratio
        self.min_check = min_check
        self.piece = piece
        self._fed = 0
        self.produced = 0

    @property
    def identity(self) -> bool:
        """True when the body is not encoded (its bytes are the decoded bytes)."""
        return not self._layers

    @property
    def ended(self) -> bool:
        """True once every layer's compressed stream reached its end (always for identity)."""
        return all(layer.ended for layer in self._layers)

    @property
    def consumed(self) -> int:
        """Body bytes taken in by the outermost layer so far."""
        return self._layers[0].consumed if self._layers else self._fed

    def _check(self) -> None:
        if (
            self.max_ratio is not None
            and self.produced > self.min_check
            and self.produced > self.max_ratio * max(1, self.consumed)
        ):
            raise CompressionBomb(
                f"{self.consumed} compressed bytes expand to more than {self.produced}"
                f" (over {self.max_ratio:g}:1)"
            )

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Decoded pieces of `data` (each at most `piece` bytes); raises CompressionBomb past
        the ratio, CorruptEncoding for a body its coding refuses."""
        self._fed += len(data)
        for out in self._through(0, data):
            self.produced += len(out)
            self._check()
            yield out

    def _through(self, i: int, data: bytes) -> Iterator[bytes]:
        if i == len(self._layers):
            if data:
                yield data
            return
        for out in self._layers[i].feed(data, self.piece):
            yield from self._through(i + 1, out)

    def flush(self) -> bytes:
        """What is left in the decoder at the end of the body."""
        out = b"".join(self._flushed(0))
        self.produced += len(out)
        self._check()
        return out

    def _flushed(self, i: int) -> Iterator[bytes]:
        if i == len(self._layers):
            return
        rest = self._layers[i].flush(self.piece)
        yield from self._through(i + 1, rest) if rest else iter(())
        yield from self._flushed(i + 1)
