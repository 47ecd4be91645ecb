"""Browser profiles left behind by browsers that did not close are swept at the next launch,
with a real Chromium: what a running browser uses, and what is too young to judge, stays.
The full browser (`BROWSER_EXECUTABLE=/usr/bin/chromium`), which also makes a singleton
directory; the default headless shell makes only the profile."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.archiver import profiles
from services.archiver.browser import BrowserBroker, BrowserLimits

pytestmark = pytest.mark.integration
FULL_CHROMIUM = "/usr/bin/chromium"


def leftover(root: Path, name: str, age_s: float) -> Path:
    path = root / name
    path.mkdir()
    (path / ("SingletonSocket" if "Chromium" in name else "Local State")).write_text("x")
    then = time.time() - age_s
    os.utime(path, (then, then))
    return path


def live(root: Path, prefix: str) -> list[Path]:
    return [p for p in root.iterdir() if p.name.startswith(prefix) and "left" not in p.name]


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A temporary folder with a short path: Chromium's SingletonSocket inside a profile in
    pytest's tmp_path (longer under xdist: .../popen-gw0/...) passes the 107-byte limit of a
    Unix socket path, and Chromium aborts."""
    path = Path(tempfile.mkdtemp(prefix="dla-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.mark.skipif(not Path(FULL_CHROMIUM).exists(), reason=f"no {FULL_CHROMIUM}")
async def test_a_launch_sweeps_what_dead_browsers_left(
    short_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp_path = short_tmp
    # the driver and Chromium make their directories in TMPDIR: here, the test's own
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    old_profile = leftover(tmp_path, profiles.PROFILE_PREFIX + "left1", 3600)
    old_singleton = leftover(tmp_path, profiles.SINGLETON_PREFIX + "left1", 3600)
    young = leftover(tmp_path, profiles.PROFILE_PREFIX + "left2", 0)
    unrelated = leftover(tmp_path, "someone-else", 3600)

    async with BrowserBroker(BrowserLimits(executable=FULL_CHROMIUM)) as broker:
        await broker.warm()
        assert not old_profile.exists() and not old_singleton.exists()
        assert young.exists() and unrelated.exists()
        (profile,) = live(tmp_path, profiles.PROFILE_PREFIX)
        (singleton,) = live(tmp_path, profiles.SINGLETON_PREFIX)
        assert profile.name in profiles.profiles_in_use()

        # even with no age limit, a running browser's directories stay
        swept = profiles.sweep_stale_profiles(tmp_path, min_age_s=0)
        assert swept == [young]
        assert profile.exists() and singleton.exists()

        # a killed browser: the driver removes its profile, nobody its singleton directory
        await broker._kill("crash")
        assert profiles.sweep_stale_profiles(tmp_path, min_age_s=0) == [singleton]
        assert not profile.exists()
    assert unrelated.exists()
