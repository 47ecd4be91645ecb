"""`dla up` prints each mistyped setting its services found, once (services/supervisor/slips.py)."""

from __future__ import annotations

from pathlib import Path

from services.supervisor.slips import SlipReport
from shared.setting_names import read_slips, record_slips, slips_file


def test_each_slip_is_printed_once_and_an_earlier_runs_file_says_nothing(tmp_path: Path) -> None:
    record_slips(tmp_path, "poller", {"POLL_INTERVAL": "POLL_INTERVAL_SECONDS"})  # a run before
    report = SlipReport(tmp_path, ["poller", "archiver", "media"])
    assert report.lines() == []
    slip = {"SCREENSHOT_SCLAE": "SCREENSHOT_SCALE"}
    record_slips(tmp_path, "archiver", slip)
    record_slips(tmp_path, "media", slip)
    assert report.lines() == [
        "SCREENSHOT_SCLAE is not a setting and is ignored: did you mean SCREENSHOT_SCALE?"
    ]
    assert report.lines() == []
    record_slips(tmp_path, "archiver", {})  # started again with the name mended
    assert not slips_file(tmp_path, "archiver").exists()
    slips_file(tmp_path, "media").write_text("[not an object")
    assert read_slips(tmp_path, "media") == {}
