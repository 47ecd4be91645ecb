"""`dla up` prints each line of its services' start reports once
(services/supervisor/start_reports.py), and a service whose settings are refused ends at once
with one line a setting and its report (shared.lifecycle)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from services.supervisor.restarts import exit_reason
from services.supervisor.start_reports import StartReports
from shared.setting_names import EXIT_CONFIG, StartReport, read_report, record_report, report_file


def test_each_line_is_printed_once_and_an_earlier_runs_report_says_nothing(
    tmp_path: Path,
) -> None:
    earlier = StartReport({"POLL_INTERVAL": "POLL_INTERVAL_SECONDS"})
    record_report(tmp_path, "poller", earlier)
    reports = StartReports(tmp_path, ["poller", "archiver", "media"])
    assert reports.lines() == []
    plugin = "screenshot: SCREENSHOT_SCALE: 7.0 is greater than the maximum of 1"
    idle = "www.x.com.txt in COOKIES_DIR is named for no site: name it x.com.txt"
    found = StartReport({"SCREENSHOT_SCLAE": "SCREENSHOT_SCALE"}, [plugin], [idle])
    record_report(tmp_path, "archiver", found)
    record_report(tmp_path, "media", found)
    assert reports.lines() == [
        "SCREENSHOT_SCLAE is not a setting and is ignored: did you mean SCREENSHOT_SCALE?",
        f"setting refused: {plugin}",
        f"setting without effect: {idle}",
    ]
    assert reports.lines() == []
    record_report(tmp_path, "archiver", StartReport())  # started again with the names mended
    assert not report_file(tmp_path, "archiver").exists()
    report_file(tmp_path, "media").write_text("[not an object")
    assert read_report(tmp_path, "media") == StartReport()


def test_a_refused_setting_ends_the_service_with_a_line_not_a_traceback(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DATA_DIR": str(tmp_path),
        "POLL_INTERVAL_SECONDS": "abc",
        "NATS_REPLICAS": "9",
        "AWS_SECRET_ACCESS_KEY": "not-a-secret-to-show",
        "NATS_URL": "nats://127.0.0.1:1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "services.poller"], env=env, capture_output=True, timeout=60
    )
    assert done.returncode == EXIT_CONFIG
    err = done.stderr.decode()
    assert "Traceback" not in err
    assert "setting refused: POLL_INTERVAL_SECONDS='abc': " in err
    assert "(the poller cannot start)" in err
    report = json.loads(report_file(tmp_path, "poller").read_text())
    refused = sorted(line.split(":")[0] for line in report["refused"])
    assert refused == ["NATS_REPLICAS='9'", "POLL_INTERVAL_SECONDS='abc'"]
    assert "not-a-secret-to-show" not in err + json.dumps(report)
    assert exit_reason(done.returncode).startswith("stopped at start: a setting was refused")


def test_the_writers_own_commands_refuse_a_setting_in_a_line_too(tmp_path: Path) -> None:
    """`python -m services.writer publish` (what `dla backup` runs) checks the writer's
    settings, which `dla` does not know."""
    env = {**os.environ, "DATA_DIR": str(tmp_path), "BACKUP_INTERVAL_SECONDS": "abc"}
    out = str(tmp_path / "public.sqlite3.gz")
    done = subprocess.run(
        [sys.executable, "-m", "services.writer", "publish", "--output", out],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == EXIT_CONFIG and "Traceback" not in done.stderr
    assert "setting refused: BACKUP_INTERVAL_SECONDS='abc'" in done.stderr
