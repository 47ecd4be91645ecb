"""The viewer's package: fetched once, unpacked only when its hash is the pinned one (a local
fixture server stands in for the npm registry)."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import io
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.web.replay import bundle
from testkit.httpserver import FixtureServer, Reply

FILES = {"package/ui.js": b"// ui", "package/sw.js": b"// sw", "package/LICENSE": b"AGPL"}


def tarball(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


@pytest.fixture
def registry() -> Iterator[FixtureServer]:
    with FixtureServer() as server:
        yield server


def serve(registry: FixtureServer, data: bytes) -> tuple[bundle.Pin, str]:
    registry.routes["/pkg.tgz"] = Reply(data, headers={"Content-Type": "application/gzip"})
    pin = dataclasses.replace(bundle.REPLAYWEBPAGE, version="0.0.1", integrity=integrity(data))
    return pin, f"{registry.base}/pkg.tgz"


def test_the_pinned_package_is_unpacked_once(registry: FixtureServer, tmp_path: Path) -> None:
    data = tarball(FILES)
    pin, url = serve(registry, data)
    target = bundle.default_dir(pin, tmp_path)
    assert target == tmp_path / "replaywebpage-0.0.1"
    assert bundle.ensure(target, pin, url) == target
    assert (target / "ui.js").read_bytes() == b"// ui" and (target / "LICENSE").read_bytes()
    assert (target / pin.tarball_name).read_bytes() == data  # the source, as served
    del registry.routes["/pkg.tgz"]  # a complete copy is not fetched again
    assert bundle.ensure(target, pin, url) == target


def test_another_package_than_the_pinned_one_is_refused(
    registry: FixtureServer, tmp_path: Path
) -> None:
    pin, url = serve(registry, tarball(FILES))
    forged = tarball(FILES | {"package/sw.js": b"// not the pinned worker"})
    registry.routes["/pkg.tgz"] = Reply(forged)
    with pytest.raises(bundle.BundleError, match="integrity mismatch"):
        bundle.ensure(tmp_path / "viewer", pin, url)
    assert not (tmp_path / "viewer").exists() and list(tmp_path.iterdir()) == []


def test_a_package_without_the_served_files_is_refused(
    registry: FixtureServer, tmp_path: Path
) -> None:
    pin, url = serve(registry, tarball({"package/ui.js": b"// ui"}))
    with pytest.raises(bundle.BundleError, match=r"has no sw\.js"):
        bundle.ensure(tmp_path / "viewer", pin, url)
    assert list(tmp_path.iterdir()) == []


def test_a_registry_that_does_not_answer_is_an_error(tmp_path: Path) -> None:
    pin = dataclasses.replace(bundle.REPLAYWEBPAGE, version="0.0.1")
    with FixtureServer() as server:
        url = f"{server.base}/missing.tgz"  # 404
        with pytest.raises(bundle.BundleError, match="download of"):
            bundle.ensure(tmp_path / "viewer", pin, url)
