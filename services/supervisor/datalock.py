"""One `dla up` per data directory: an exclusive `flock` on DATA_DIR/dla.lock.

The kernel drops the lock when the holder dies, however it dies, so a stale lock file never
blocks a start. `dla restore` takes the same lock: it only runs while the stack is stopped.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from shared.errors import ConfigError

LOCK_NAME = "dla.lock"


class DataDirBusy(ConfigError):
    """Another process holds the data directory."""


class DataDirLock:
    """Holds DATA_DIR/dla.lock exclusively while open; the file says who holds it."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / LOCK_NAME
        self._fd: int | None = None

    def acquire(self, what: str = "dla up") -> DataDirLock:
        """Take the lock or raise DataDirBusy naming the holder."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise DataDirBusy(
                f"{self.path.parent} is in use by {holder}; stop it first "
                "(one `dla up` per data directory)"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{what} (pid {os.getpid()})\n".encode(), 0)
        self._fd = fd
        return self

    @property
    def fd(self) -> int | None:
        """The open lock file's descriptor while held (the front process keeps it across its
        exec, services/supervisor/front.py)."""
        return self._fd

    def release(self) -> None:
        """Drop the lock."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> DataDirLock:
        return self.acquire()

    def __exit__(self, *_: object) -> None:
        self.release()
