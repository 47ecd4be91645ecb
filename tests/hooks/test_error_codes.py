"""The error-code table: which codes tell a reader what happened."""

from __future__ import annotations

import pytest

from shared.hooks.error_codes import reason_of, telling


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("E_FETCH_STALLED", True),
        ("E_FETCH_TOO_LARGE", True),
        ("E_FETCH_HTTP_404", True),
        ("E_NAVIGATE_DECLINED", True),
        ("E_SCREENSHOT_RESOURCE_LIMIT", True),
        ("E_NAVIGATE_TIMEOUT", False),
        ("E_PDF_UNRESPONSIVE", False),
        ("E_DOM_BROWSER", False),
        ("E_METADATA_DEPENDENCY", False),
        ("E_WHATEVER_UNHEARD_OF", False),
        (None, False),
    ],
)
def test_telling_codes_name_what_the_server_or_page_did(code: str | None, expected: bool) -> None:
    assert telling(code) is expected, reason_of(code)
