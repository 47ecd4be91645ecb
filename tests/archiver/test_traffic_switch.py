"""Whether the archiver records the browser's traffic: only when a hook will ask for it."""

from __future__ import annotations

import shutil
from pathlib import Path

from services.archiver.service import page_options
from services.archiver.settings import ArchiverSettings
from shared.capture.settings import REPO_PLUGINS

MIB = 1024 * 1024


def test_recorded_by_default_within_browser_warc_max_mb() -> None:
    s = ArchiverSettings(browser_warc_max_mb=7)
    assert page_options(s, {}).warc_max_bytes == 7 * MIB


def test_not_recorded_when_the_traffic_plugin_is_switched_off() -> None:
    s = ArchiverSettings()
    assert page_options(s, {"TRAFFIC_ENABLED": "false"}).warc_max_bytes == 0
    assert page_options(s, {"TRAFFIC_ENABLED": "true"}).warc_max_bytes == 100 * MIB


def test_not_recorded_with_browser_warc_max_mb_0() -> None:
    assert page_options(ArchiverSettings(browser_warc_max_mb=0), {}).warc_max_bytes == 0


def test_not_recorded_when_the_plugins_dir_has_no_traffic_plugin(tmp_path: Path) -> None:
    shutil.copytree(REPO_PLUGINS / "navigate", tmp_path / "navigate")
    s = ArchiverSettings(plugins_dir=tmp_path)
    assert page_options(s, {}).warc_max_bytes == 0
