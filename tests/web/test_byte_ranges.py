"""Range headers as the replay viewer sends them: from an offset, the last N bytes."""

from __future__ import annotations

import pytest

from services.web.byte_ranges import ByteRange, Unsatisfiable, parse


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("bytes=0-9", ByteRange(0, 9, 100)),
        ("bytes=90-", ByteRange(90, 99, 100)),
        ("bytes=95-500", ByteRange(95, 99, 100)),
        ("bytes=-10", ByteRange(90, 99, 100)),
        ("bytes=-1000", ByteRange(0, 99, 100)),
        (" bytes = 5 - 6 ", ByteRange(5, 6, 100)),
    ],
)
def test_one_range(header: str, expected: ByteRange) -> None:
    assert parse(header, 100) == expected


@pytest.mark.parametrize(
    "header", [None, "", "bytes=0-1,5-6", "items=0-1", "bytes=-", "bytes=9-3", "bytes=a-b"]
)
def test_what_is_not_one_range_asks_for_the_whole_body(header: str | None) -> None:
    assert parse(header, 100) is None


@pytest.mark.parametrize("header", ["bytes=100-", "bytes=100-200", "bytes=-0"])
def test_a_range_past_the_end_is_unsatisfiable(header: str) -> None:
    with pytest.raises(Unsatisfiable):
        parse(header, 100)


def test_content_range_and_length() -> None:
    part = ByteRange(90, 99, 100)
    assert part.content_range == "bytes 90-99/100" and part.length == 10
