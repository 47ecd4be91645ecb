"""A small filesystem for the writer's database (a size-limited tmpfs), to fill on purpose.

Mounting needs root (or CAP_SYS_ADMIN); `small_disk` skips the test that asks for it when
the mount is refused. Unmounted by the test that mounted it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_disk(path: Path, size_mb: int) -> Iterator[Path]:
    """Mount a tmpfs of size_mb at path (created); skip the test if mounting is refused."""
    path.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m,mode=0755", "tmpfs", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs (needs root): {result.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(path: Path) -> Path:
    """Write a filler file in path until the filesystem is full; returns the filler."""
    filler = path / "filler.bin"
    chunk = b"\0" * (64 * 1024)
    with filler.open("wb", buffering=0) as fh:
        try:
            while True:
                fh.write(chunk)
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
    with contextlib.suppress(OSError), filler.open("ab", buffering=0) as fh:
        while True:
            fh.write(b"\0" * 512)  # the last few blocks too
    os.sync()
    return filler
