"""BER to DER, for checking a timestamp authority's reply (docs/architecture.md, "Evidence").

rfc3161-client parses replies as strict DER; `openssl ts -verify` also takes BER (indefinite
lengths, strings cut into segments) and a SignedData whose certificate SET is not in DER
order, as OpenSSL's own `openssl ts -reply` sends it. `timestamp_reply` re-encodes a copy of
a reply so the strict parser reads it: definite, minimal lengths everywhere, segmented
strings joined, and the certificate (and CRL) SETs of the token's SignedData in DER order.
Nothing a signature covers changes: primitive contents are kept byte for byte (the token's
TSTInfo is the content of an OCTET STRING), and no other SET is reordered (OpenSSL checks
the signed attributes in the order received). The authority's bytes are what is stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_DEPTH = 64
"""Nesting deeper than this is no timestamp reply (and would exhaust the stack)."""
STRING_TAGS = frozenset({4, 12, 18, 19, 20, 21, 22, 25, 26, 27, 28, 30})
"""Universal string types whose BER form may be constructed (segments): OCTET STRING and the
character strings (BIT STRING, 3, is handled apart: each segment has its unused-bits byte)."""
BIT_STRING = 3
SEQUENCE = 0x30
CERTIFICATES, CRLS = 0xA0, 0xA1
"""SignedData's `[0] IMPLICIT CertificateSet` and `[1] IMPLICIT RevocationInfoChoices`."""


class BerError(ValueError):
    """The bytes are not one well-formed BER value."""


@dataclass
class Tlv:
    """One BER value: its identifier octets and either its content (primitive) or its parts."""

    ident: bytes
    content: bytes = b""
    parts: list[Tlv] | None = field(default=None)

    @property
    def constructed(self) -> bool:
        return self.parts is not None


def parse(data: bytes) -> Tlv:
    """The single BER value `data` holds (BerError when it holds anything else)."""
    value, end = _read(data, 0, 0)
    if end != len(data):
        raise BerError(f"{len(data) - end} bytes after the value")
    return value


def encode(value: Tlv) -> bytes:
    """`value` in DER form: definite minimal lengths, segmented strings joined."""
    value = _joined(value)
    content = value.content if value.parts is None else b"".join(map(encode, value.parts))
    return value.ident + _length(len(content)) + content


def timestamp_reply(reply: bytes) -> bytes:
    """A DER copy of a TimeStampResp (RFC 3161) for checking; see the module's words."""
    root = parse(reply)
    if root.ident != bytes([SEQUENCE]) or not root.parts:
        raise BerError("not a SEQUENCE")
    signed = signed_data(root)
    if signed is not None:
        for part in signed.parts or ():
            if part.ident[0] in (CERTIFICATES, CRLS) and part.parts is not None:
                part.parts = [_joined(p) for p in part.parts]
                part.parts.sort(key=encode)  # DER: SET OF members in the order of their encodings
    return encode(root)


def signed_data(root: Tlv) -> Tlv | None:
    """TimeStampResp.timeStampToken (ContentInfo) -> [0] EXPLICIT -> SignedData, if there."""
    if root.parts is None or len(root.parts) < 2:
        return None
    token = root.parts[1]
    if token.parts is None or len(token.parts) < 2 or token.parts[1].parts is None:
        return None
    content = token.parts[1].parts
    return content[0] if content and content[0].constructed else None


def _read(data: bytes, pos: int, depth: int) -> tuple[Tlv, int]:
    if depth > MAX_DEPTH:
        raise BerError(f"nested deeper than {MAX_DEPTH}")
    start = pos
    if pos >= len(data):
        raise BerError("truncated: no identifier")
    first = data[pos]
    pos += 1
    if first & 0x1F == 0x1F:  # high tag number: base-128 octets, the last without bit 8
        while True:
            if pos >= len(data):
                raise BerError("truncated identifier")
            pos += 1
            if not data[pos - 1] & 0x80:
                break
    ident = data[start:pos]
    constructed = bool(first & 0x20)
    if pos >= len(data):
        raise BerError("truncated: no length")
    n = data[pos]
    pos += 1
    if n == 0x80:
        if not constructed:
            raise BerError("indefinite length on a primitive value")
        parts = []
        while data[pos : pos + 2] != b"\x00\x00":
            if pos >= len(data):
                raise BerError("truncated: no end-of-contents")
            part, pos = _read(data, pos, depth + 1)
            parts.append(part)
        return Tlv(ident, parts=parts), pos + 2
    if n & 0x80:
        width = n & 0x7F
        if width > 4 or n == 0xFF:
            raise BerError(f"length of {width} octets")
        if pos + width > len(data):
            raise BerError("truncated length")
        size = int.from_bytes(data[pos : pos + width], "big")
        pos += width
    else:
        size = n
    end = pos + size
    if end > len(data):
        raise BerError(f"truncated: {size} bytes announced, {len(data) - pos} there")
    if not constructed:
        return Tlv(ident, data[pos:end]), end
    parts = []
    while pos < end:
        part, pos = _read(data[:end], pos, depth + 1)
        parts.append(part)
    return Tlv(ident, parts=parts), end


def _joined(value: Tlv) -> Tlv:
    """A constructed (segmented) universal string as the one primitive value DER wants."""
    if value.parts is None or len(value.ident) != 1 or value.ident[0] & 0xC0:
        return value
    number = value.ident[0] & 0x1F
    if number == BIT_STRING:
        segments = [_joined(p) for p in value.parts]
        if any(s.constructed or not s.content for s in segments):
            raise BerError("a BIT STRING segment is not a bit string")
        unused = segments[-1].content[:1] if segments else b"\x00"
        content = unused + b"".join(s.content[1:] for s in segments)
    elif number in STRING_TAGS:
        segments = [_joined(p) for p in value.parts]
        if any(s.constructed for s in segments):
            raise BerError("a string segment is not a string")
        content = b"".join(s.content for s in segments)
    else:
        return value
    return Tlv(bytes([value.ident[0] & ~0x20 & 0xFF]), content)


def _length(size: int) -> bytes:
    if size < 0x80:
        return bytes([size])
    octets = size.to_bytes((size.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(octets)]) + octets
