"""The one hasher of files: a file's size and sha256, read a MiB at a time (never held
whole). Artifacts, binaries, post media and the WACZ are all hashed here."""

from __future__ import annotations

import hashlib
import os

CHUNK = 1 << 20


def sha256_file(path: str | os.PathLike[str]) -> tuple[int, str]:
    """(size in bytes, hex sha256) of a file; OSError when it cannot be read."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()
