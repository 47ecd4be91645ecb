"""The archiver knows which writing systems its browser cannot draw (real fontconfig)."""

from __future__ import annotations

import logging
import shutil
import subprocess
from pathlib import Path

import pytest

from services.archiver import fonts

needs_fc_list = pytest.mark.skipif(shutil.which("fc-list") is None, reason="no fc-list here")


@needs_fc_list
def test_the_answer_is_what_fontconfig_lists() -> None:
    missing = fonts.missing_scripts()
    assert missing is not None
    for script in fonts.SCRIPTS:
        listed = subprocess.run(
            ["fc-list", script.query, "family"], capture_output=True, text=True, check=True
        ).stdout.strip()
        assert (script in missing) == (not listed), script.name


@needs_fc_list
def test_a_machine_without_fonts_misses_every_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "fonts").mkdir()
    conf = tmp_path / "fonts.conf"
    conf.write_text(
        f'<?xml version="1.0"?><fontconfig><dir>{tmp_path / "fonts"}</dir>'
        f"<cachedir>{tmp_path / 'cache'}</cachedir></fontconfig>"
    )
    monkeypatch.setenv("FONTCONFIG_FILE", str(conf))
    missing = fonts.missing_scripts()
    assert missing == list(fonts.SCRIPTS)
    with caplog.at_level(logging.WARNING, logger=fonts.__name__):
        fonts.warn_missing(missing)
    assert "no font for Chinese, Japanese, Korean, Arabic" in caplog.text
    assert (
        "apt-get install fonts-liberation fonts-noto-cjk fonts-noto-color-emoji fonts-noto-core"
        in caplog.text
    )
    assert fonts.health(missing)["fonts_missing"] == [s.name for s in fonts.SCRIPTS]


def test_without_fontconfig_nothing_is_known(caplog: pytest.LogCaptureFixture) -> None:
    assert fonts.missing_scripts("no-such-fc-list-here") is None
    assert fonts.health(None) == {"ok": True, "fonts_missing": None}
    with caplog.at_level(logging.WARNING, logger=fonts.__name__):
        fonts.warn_missing(None)
    assert "cannot tell" in caplog.text
