"""An opted-out page reads as declined whichever plugin declined it (fetch or navigate)."""

from __future__ import annotations

import pytest

from services.web.present import display_status
from shared.hooks.error_codes import reason_of, retry_worthy


@pytest.mark.parametrize("plugin", ["fetch", "navigate"])
def test_a_declined_link_reads_declined_and_is_not_retried(plugin: str) -> None:
    code = f"E_{plugin.upper()}_DECLINED"
    assert display_status("failed", code) == (f"failed · {plugin} declined", "failed")
    assert reason_of(code) == "declined"
    assert not retry_worthy(code)
