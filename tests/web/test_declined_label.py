"""An opted-out page reads as not archived at its own asking, whichever plugin declined it
(fetch or navigate), and is shown as no failure."""

from __future__ import annotations

import pytest

from services.web.present import display_status
from shared.hooks.error_codes import reason_of, retry_worthy


@pytest.mark.parametrize("plugin", ["fetch", "navigate"])
def test_a_declined_link_reads_declined_and_is_not_retried(plugin: str) -> None:
    code = f"E_{plugin.upper()}_DECLINED"
    assert display_status("failed", code) == (
        "not archived: the page asks not to be archived",
        "declined",  # no .status-declined rule: the neutral pill, not the failure's red
    )
    assert reason_of(code) == "declined"
    assert not retry_worthy(code)


@pytest.mark.parametrize(
    ("status", "code", "label"),
    [
        ("failed", "E_NAVIGATE_REFUSED", "failed · refused"),
        ("failed", "E_FETCH_FAILED", "failed · network error"),
        ("partial", "E_FETCH_STALLED", "partial · stalled"),
        ("failed", "E_FETCH_HTTP_404", "failed · HTTP 404"),
        ("archived", "E_SCREENSHOT_TIMEOUT", "archived · last try timeout"),
        ("failed", "E_SOMEPLUGIN_ODDITY", "failed · someplugin oddity"),  # not in the table
    ],
)
def test_a_label_names_what_happened_not_which_step(status: str, code: str, label: str) -> None:
    """The pill says why in the table's words; which step met it is the history's detail."""
    assert display_status(status, code)[0] == label
