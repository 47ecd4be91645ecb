"""Browser profiles left behind by browsers that did not close.

Playwright gives each browser it launches a temporary profile
(`playwright_chromiumdev_profile-*`, ~5 MB) and Chromium a singleton directory
(`org.chromium.Chromium.*`, named by the profile's `SingletonSocket` link), both in the
temporary directory. Playwright's driver removes them when the browser closes, but not
when the driver dies with it: a stop that signals the archiver's whole process group (as
`dla up` does when it stops), an out-of-memory kill, or SIGKILL: each such stop leaves one
profile behind.

`sweep_stale_profiles` removes the profiles no running process uses (no process's command
line names it as `--user-data-dir`) and the singleton directories whose socket nobody
listens on (`shared.processes.unix_sockets`), older than `min_age_s`, so what another
archiver on the machine has just made, before its browser starts, is kept. The broker
sweeps before each launch.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

from shared import processes

log = logging.getLogger(__name__)

PROFILE_PREFIX = "playwright_chromiumdev_profile-"
SINGLETON_PREFIX = "org.chromium.Chromium."
USER_DATA_DIR = "--user-data-dir="


def profiles_in_use() -> set[str]:
    """The names of the `--user-data-dir` of every process whose command line is readable
    (names, not paths: TMPDIR may be spelled differently, and the names are unique)."""
    used: set[str] = set()
    for _pid, cmdline in processes.command_lines():
        for arg in cmdline:
            if arg.startswith(USER_DATA_DIR):
                used.add(os.path.basename(arg[len(USER_DATA_DIR) :].rstrip("/")))
    return used


def _old(path: Path, now: float, min_age_s: float) -> bool:
    try:
        info = path.lstat()
    except OSError:
        return False
    return now - info.st_mtime >= min_age_s and path.is_dir() and not path.is_symlink()


def sweep_stale_profiles(root: Path | None = None, min_age_s: float = 60.0) -> list[Path]:
    """Remove the stale profiles and singleton directories under `root` (the temporary
    directory); returns them. A singleton directory is stale when no process listens on its
    SingletonSocket."""
    root = Path(tempfile.gettempdir()) if root is None else root
    try:
        names = [p for p in root.iterdir() if p.name.startswith((PROFILE_PREFIX, SINGLETON_PREFIX))]
    except OSError:
        return []
    now = time.time()
    names = [p for p in names if _old(p, now, min_age_s)]
    if not names:
        return []
    used, listening = profiles_in_use(), processes.unix_sockets()
    stale = [
        p
        for p in names
        if (p.name.startswith(PROFILE_PREFIX) and p.name not in used)
        or (p.name.startswith(SINGLETON_PREFIX) and str(p / "SingletonSocket") not in listening)
    ]
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)
    if stale:
        log.info("removed %d browser directories left by browsers that did not close", len(stale))
    return stale
