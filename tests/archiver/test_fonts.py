"""The archiver knows which writing systems its browser cannot draw (real fontconfig)."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from services.archiver import fonts

needs_fc_list = pytest.mark.skipif(shutil.which("fc-list") is None, reason="no fc-list here")


LIBERATION = Path("/usr/share/fonts/truetype/liberation")


def only_fonts_of(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fontconfig for this process and its children sees the fonts in `folder` alone."""
    conf = tmp_path / "fonts.conf"
    conf.write_text(
        f'<?xml version="1.0"?><fontconfig><dir>{folder}</dir>'
        f"<cachedir>{tmp_path / 'cache'}</cachedir></fontconfig>"
    )
    monkeypatch.setenv("FONTCONFIG_FILE", str(conf))


@needs_fc_list
def test_the_fonts_make_up_installs_draw_every_script() -> None:
    """deploy/install-system-deps.sh (make's bootstrap, so before any `make test`) installs
    Liberation and Noto: nothing is missing."""
    assert fonts.missing_scripts() == []


@needs_fc_list
@pytest.mark.skipif(not LIBERATION.is_dir(), reason="fonts-liberation not installed")
def test_with_latin_fonts_alone_the_other_scripts_are_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    only_fonts_of(LIBERATION, tmp_path, monkeypatch)
    missing = fonts.missing_scripts()
    assert missing is not None
    # Liberation draws Latin, Cyrillic and Greek, and nothing else the archiver asks about
    assert [s.name for s in missing] == [
        "Chinese", "Japanese", "Korean", "Arabic", "Hebrew", "Devanagari", "Thai", "emoji",
    ]  # fmt: skip


@needs_fc_list
def test_a_machine_without_fonts_misses_every_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "fonts").mkdir()
    only_fonts_of(tmp_path / "fonts", tmp_path, monkeypatch)
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
