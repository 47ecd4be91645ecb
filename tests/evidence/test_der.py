"""The BER-to-DER re-encoder that lets the strict parser read what `openssl ts -verify`
reads: lengths, segmented strings, the certificate SET's order; malformed input refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.evidence import der
from testkit.tsa import as_ber


@pytest.mark.parametrize(
    ("ber", "expected"),
    [
        ("3080020101 0000", "3003020101"),  # indefinite length
        ("30820003 020101", "3003020101"),  # long form where the short one does
        ("3080 2480 040161 040162 0000 0000", "3004 04026162"),  # segmented OCTET STRING
        ("2380 03020061 03020460 0000", "0303046160"),  # segmented BIT STRING: last unused
        ("2c80 0c0161 0c0162 0000", "0c026162"),  # segmented UTF8String
        ("a080 3080 0000 0000", "a002 3000"),  # context tags kept, only lengths change
        ("1f8101 01 ff", "1f8101 01 ff"),  # a high tag number kept as it is
    ],
)
def test_ber_becomes_der(ber: str, expected: str) -> None:
    assert der.encode(der.parse(bytes.fromhex(ber))) == bytes.fromhex(expected)


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ("3003020101 00", "after the value"),
        ("3005020101", "truncated"),
        ("3080020101", "end-of-contents"),
        ("0480 0000", "primitive"),
        ("3085 0000000001 00", "length of 5 octets"),
        ("3080" * 80, "nested deeper"),
        ("", "no identifier"),
        ("1f81", "truncated identifier"),
    ],
)
def test_malformed_is_refused_with_its_reason(data: str, why: str) -> None:
    with pytest.raises(der.BerError, match=why):
        der.parse(bytes.fromhex(data))


def signed_reply(certs: list[bytes]) -> bytes:
    """A TimeStampResp skeleton: status, ContentInfo, [0] SignedData with `certs`."""
    set_ = der.Tlv(b"\xa0", parts=[der.parse(c) for c in certs])
    signed = der.Tlv(b"\x30", parts=[der.Tlv(b"\x02", b"\x03"), der.Tlv(b"\x31", parts=[]), set_])
    info = der.Tlv(b"\x30", parts=[der.Tlv(b"\x06", b"\x2a\x03"), der.Tlv(b"\xa0", parts=[signed])])
    status = der.Tlv(b"\x30", parts=[der.Tlv(b"\x02", b"\x00")])
    return der.encode(der.Tlv(b"\x30", parts=[status, info]))


def test_the_certificate_set_is_sorted_and_nothing_else_moves() -> None:
    big, small = bytes.fromhex("3003020109"), bytes.fromhex("3003020101")
    reply = signed_reply([big, small])
    fixed = der.timestamp_reply(reply)
    assert fixed == signed_reply([small, big])
    assert len(fixed) == len(reply) and der.timestamp_reply(fixed) == fixed
    unsorted_elsewhere = bytes.fromhex("3008 3006 020102 020101")  # no token: left alone
    assert der.timestamp_reply(unsorted_elsewhere) == unsorted_elsewhere


def values() -> st.SearchStrategy[der.Tlv]:
    """DER values: primitive OCTET STRINGs and INTEGERs, SEQUENCEs of them."""
    leaf = st.builds(der.Tlv, st.sampled_from([b"\x04", b"\x02"]), st.binary(max_size=300))
    return st.recursive(
        leaf, lambda kids: st.builds(lambda p: der.Tlv(b"\x30", parts=p), st.lists(kids)),
        max_leaves=30,
    )  # fmt: skip


@given(values())
def test_any_ber_form_comes_back_to_the_der(value: der.Tlv) -> None:
    expected = der.encode(value)
    assert der.encode(der.parse(as_ber(value))) == expected
    assert der.encode(der.parse(expected)) == expected
