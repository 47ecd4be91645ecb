"""ReplayWeb.page, the replay viewer: the npm package ``replaywebpage`` at one pinned version,
fetched from the npm registry once, checked against its pinned integrity hash and cached.

The package is AGPL-3.0: its ``LICENSE`` and the tarball itself (which holds its ``src/``) are
kept beside the two files we serve, and the UI serves all three (``/about/replay``). Nothing of
it is in git: ``make bootstrap`` (so ``make up`` and ``make test``) and the Dockerfile run
``python -m services.web.replay.bundle``, which does nothing when the cache already holds the
pinned version.
"""

from __future__ import annotations

import base64
import hashlib
import io
import logging
import os
import sys
import tarfile
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Pin:
    """One exact version of the package and the hash its tarball must have."""

    name: str
    version: str
    integrity: str
    """The registry's ``dist.integrity`` (``sha512-<base64>``): checked before anything is
    unpacked."""
    source: str
    """Where the exact version's source is (besides its tarball, which we serve)."""
    bundled: str
    """What else its bundles hold, at which version."""
    bundled_source: str
    """Where that exact version's source is."""

    @property
    def tarball_url(self) -> str:
        return f"https://registry.npmjs.org/{self.name}/-/{self.name}-{self.version}.tgz"

    @property
    def tarball_name(self) -> str:
        return f"{self.name}-{self.version}.tgz"


REPLAYWEBPAGE = Pin(
    name="replaywebpage",
    version="2.5.3",
    integrity="sha512-nCj2PSON3BxeSJKE8AsYPyULv0XPZKJWfy4l9PyQre9SqwLZ+WKZVs/sfLqPOQ4GrH+0YkjbwOhr8cSTH08gsQ==",
    source="https://github.com/webrecorder/replayweb.page/tree/v2.5.3",
    bundled="wabac.js 2.27.2 (its service worker, sw.js)",
    bundled_source="https://github.com/webrecorder/wabac.js/tree/v2.27.2",
)
SERVED = ("ui.js", "sw.js", "LICENSE")
"""The package's files we keep (``package/<name>`` in the tarball)."""
TIMEOUT_S = 60.0
MAX_BYTES = 50 << 20


class BundleError(Exception):
    """The package could not be fetched, or is not the pinned one."""


def default_dir(pin: Pin = REPLAYWEBPAGE, cache: Path | None = None) -> Path:
    """Where the pinned version is kept: ``<cache>/<name>-<version>/``, by default in the
    checkout's ``.cache/`` (git-ignored; ``/app/.cache`` in the image)."""
    if cache is None:
        cache = Path(__file__).resolve().parents[3] / ".cache"
    return cache / f"{pin.name}-{pin.version}"


def is_complete(directory: Path, pin: Pin = REPLAYWEBPAGE) -> bool:
    """True when the directory holds every file we serve and the checked tarball."""
    return all((directory / n).is_file() for n in (*SERVED, pin.tarball_name))


def check_integrity(data: bytes, integrity: str) -> None:
    """Raise BundleError unless ``data`` has this Subresource-Integrity-style hash."""
    algo, _, expected = integrity.partition("-")
    if algo not in {"sha256", "sha384", "sha512"}:
        raise BundleError(f"unsupported integrity algorithm {algo!r}")
    got = base64.b64encode(hashlib.new(algo, data).digest()).decode()
    if got != expected:
        raise BundleError(f"integrity mismatch: expected {integrity}, got {algo}-{got}")


def download(url: str) -> bytes:
    """The tarball's bytes (at most MAX_BYTES)."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as resp:
            data: bytes = resp.read(MAX_BYTES + 1)
    except OSError as exc:
        raise BundleError(f"download of {url} failed: {exc}") from exc
    if len(data) > MAX_BYTES:
        raise BundleError(f"{url} is larger than {MAX_BYTES} bytes")
    return data


def unpack(data: bytes, directory: Path, pin: Pin) -> None:
    """Write the served files and the tarball into ``directory`` (atomically: a directory
    that exists is complete)."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{pin.name}-", dir=directory.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for name in SERVED:
                try:
                    member = tar.extractfile(f"package/{name}")
                except KeyError:
                    member = None
                if member is None:
                    raise BundleError(f"the package has no {name}")
                (staging / name).write_bytes(member.read())
        (staging / pin.tarball_name).write_bytes(data)
        for path in staging.iterdir():
            path.chmod(0o644)
        staging.chmod(0o755)
        os.replace(staging, directory)
    except (tarfile.TarError, OSError) as exc:
        raise BundleError(f"unpacking {pin.tarball_name} failed: {exc}") from exc
    finally:
        if staging.exists():
            for path in staging.iterdir():
                path.unlink()
            staging.rmdir()


def ensure(directory: Path | None = None, pin: Pin = REPLAYWEBPAGE, url: str | None = None) -> Path:
    """The directory holding the pinned version, fetched and checked first if missing."""
    directory = directory or default_dir(pin)
    if is_complete(directory, pin):
        return directory
    data = download(url or pin.tarball_url)
    check_integrity(data, pin.integrity)
    if directory.exists():  # an incomplete copy (files deleted by hand)
        for path in directory.iterdir():
            path.unlink()
        directory.rmdir()
    unpack(data, directory, pin)
    log.info("%s %s unpacked into %s", pin.name, pin.version, directory)
    return directory


def main() -> int:
    """``python -m services.web.replay.bundle [CACHE]``: fetch the pinned version into
    ``CACHE/<name>-<version>`` (default: the checkout's ``.cache/``) if it is not there. The
    file runs alone too (standard library only): the Dockerfile runs it before the code is
    copied."""
    cache = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    try:
        where = ensure(default_dir(REPLAYWEBPAGE, cache))
    except BundleError as exc:
        print(f"replay bundle: {exc}", file=sys.stderr)
        return 1
    print(f"{REPLAYWEBPAGE.name} {REPLAYWEBPAGE.version}: {where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
