"""shared.fetching.retry_after: the wait a Retry-After header asks for."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from shared.fetching.retry_after import MAX_WAIT, bounded, of_headers, seconds

NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("120", 120.0),
        (" 0 ", 0.0),
        ("Mon, 30 Nov 2026 12:05:00 GMT", 300.0),
        ("Sun, 29 Nov 2026 12:00:00 GMT", 0.0),  # a date gone by: no wait
        ("", None),
        ("soon", None),
        ("-5", None),
        ("1.5", None),  # RFC 9110: delay-seconds is a whole number
        ("١٢٠", None),  # Arabic-Indic digits are no HTTP number
        ("Mon, 99 Nov 2026 12:05:00 GMT", None),
    ],
)
def test_seconds(value: str, expected: float | None) -> None:
    assert seconds(value, NOW) == expected


def test_of_headers_reads_the_header_whatever_its_case() -> None:
    assert of_headers([("Content-Type", "text/html"), ("retry-AFTER", "30")]) == 30.0
    assert of_headers([["Retry-After", "7"]]) == 7.0
    assert of_headers([("Content-Type", "text/html")]) is None


def test_bounded_keeps_at_most_a_day() -> None:
    assert bounded(90) == timedelta(seconds=90)
    assert bounded(30 * 86400) == MAX_WAIT
    assert bounded(-3) == timedelta(0)


def test_a_rate_limit_window_reset_stands_in_for_a_missing_retry_after() -> None:
    # Reddit: seconds left in the window; GitHub and X: the Unix time it resets
    assert of_headers([("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "540")], NOW) == 540
    epoch = str(int(NOW.timestamp()) + 900)
    assert of_headers([("X-RateLimit-Reset", epoch)], NOW) == 900
    assert of_headers([("x-rate-limit-reset", epoch)], NOW) == 900  # X's spelling
    assert of_headers([("RateLimit-Reset", "50")], NOW) == 50  # the IETF draft's
    assert of_headers([("X-RateLimit-Reset", "soon")], NOW) is None
    assert of_headers([("X-RateLimit-Reset", "nan")], NOW) is None
    # Retry-After, when given, is what counts
    assert of_headers([("x-ratelimit-reset", "540"), ("Retry-After", "2")], NOW) == 2
