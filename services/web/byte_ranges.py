"""One ``Range: bytes=...`` request header (RFC 9110 §14), as the replay viewer sends them
(it reads a WACZ's zip directory from its end, ``bytes=-N``, and its files by offset) and as
browsers do for a proxied artifact (a video's player seeks with ``bytes=N-``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SINGLE = re.compile(r"^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$")


class Unsatisfiable(ValueError):
    """The range lies past the end of the body (answered 416)."""


@dataclass(frozen=True)
class ByteRange:
    """Bytes ``first`` to ``last``, both included, of a body of ``size`` bytes."""

    first: int
    last: int
    size: int

    @property
    def length(self) -> int:
        return self.last - self.first + 1

    @property
    def content_range(self) -> str:
        return f"bytes {self.first}-{self.last}/{self.size}"


def parse(header: str | None, size: int) -> ByteRange | None:
    """The one range asked for, or None for the whole body (no header, or one this server
    does not honour: several ranges, another unit — RFC 9110 lets it answer 200 then)."""
    if not header:
        return None
    m = _SINGLE.match(header)
    if m is None or (not m[1] and not m[2]):
        return None
    if not m[1]:  # the last N bytes
        suffix = int(m[2])
        if suffix == 0 or size == 0:
            raise Unsatisfiable(header)
        return ByteRange(max(size - suffix, 0), size - 1, size)
    first = int(m[1])
    last = int(m[2]) if m[2] else size - 1
    if m[2] and last < first:
        return None
    if first >= size:
        raise Unsatisfiable(header)
    return ByteRange(first, min(last, size - 1), size)
