"""The executables plugins need (`binaries.jsonl`), detected once per worker start."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import ValidationError

from shared.filehash import sha256_file
from shared.hooks.config import env_prefix
from shared.hooks.discovery import plugin_dirs
from shared.hooks.records import BinaryRecord, parse_record
from shared.hooks.states import BinaryMachine

log = logging.getLogger(__name__)

VENV_BIN = Path(sys.executable).parent
"""The interpreter's bin folder (the venv's): pip-installed tools such as yt-dlp live here."""
VERSION_TIMEOUT = 15.0
"""Seconds `<binary> --version` may take. yt-dlp's is a Python start with its extractors
imported: ~1 s on an idle core, past 3 s on a busy machine (a worker starting beside running
captures recorded no version)."""


def search_path(env: Mapping[str, str] | None = None) -> str:
    """PATH of `env` (default os.environ) with the venv's bin folder appended if missing."""
    path = (os.environ if env is None else env).get("PATH", os.defpath)
    parts = path.split(os.pathsep)
    return path if str(VENV_BIN) in parts else os.pathsep.join([*parts, str(VENV_BIN)])


def binary_env_name(name: str) -> str:
    """Env var that hands a binary's path to hooks: yt-dlp -> YT_DLP_BINARY."""
    return f"{env_prefix(name)}_BINARY"


def read_binaries(plugin_dir: Path) -> list[BinaryRecord]:
    """The requirements in `<plugin_dir>/binaries.jsonl` (status queued); [] if absent."""
    path = plugin_dir / "binaries.jsonl"
    if not path.is_file():
        return []
    wanted: list[BinaryRecord] = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            rec = parse_record(line)
        except ValidationError as e:
            log.warning("%s:%d: not a Binary record: %s", path, n, e)
            continue
        if isinstance(rec, BinaryRecord):
            wanted.append(rec.model_copy(update={"status": "queued"}))
    return wanted


def _version(abspath: str) -> str | None:
    for flag in ("--version", "-version"):
        try:
            done = subprocess.run(
                [abspath, flag],
                capture_output=True,
                timeout=VERSION_TIMEOUT,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        for out in (done.stdout, done.stderr):
            line = next((ln for ln in out.decode(errors="replace").splitlines() if ln.strip()), "")
            if done.returncode == 0 and line:
                return line.strip()[:200]
    return None


class BinaryCheck:
    """One binary on this machine: queued -> started (run) -> succeeded (found) | failed.

    No cleanup step: the only processes it starts are `--version` probes, each bounded by
    VERSION_TIMEOUT and reaped by subprocess.run.
    """

    def __init__(self, wanted: BinaryRecord, path: str | None = None) -> None:
        self.wanted = wanted
        self.path = path or search_path()
        self.machine = BinaryMachine()

    def run(self) -> BinaryRecord:
        """Look the binary up; returns the record with status, path, version and hash."""
        self.machine.to("started")
        abspath = shutil.which(self.wanted.name, path=self.path)
        if abspath is None:
            self.machine.to("failed")
            return self.wanted.model_copy(update={"status": self.machine.status, "abspath": None})
        self.machine.to("succeeded")
        try:
            digest: str | None = sha256_file(os.path.realpath(abspath))[1]
        except OSError:
            digest = None
        return self.wanted.model_copy(
            update={
                "status": self.machine.status,
                "abspath": abspath,
                "version": _version(abspath),
                "sha256": digest,
                "binprovider": "pip" if Path(abspath).parent == VENV_BIN else "env",
            }
        )


def detect_binaries(
    plugins_dirs: Sequence[Path], *, env: Mapping[str, str] | None = None
) -> list[BinaryRecord]:
    """Every binary named in the plugins' binaries.jsonl, looked up on PATH + the venv bin.

    One record per binary name (the first plugin to name it gives binproviders); run it at
    worker start and again to notice a binary that appeared.
    """
    wanted: dict[str, BinaryRecord] = {}
    for folder in plugin_dirs(plugins_dirs).values():
        for rec in read_binaries(folder):
            wanted.setdefault(rec.name, rec)
    path = search_path(env)
    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(lambda w: BinaryCheck(w, path).run(), wanted.values()))
