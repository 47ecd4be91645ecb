"""One WACZ per capture (WACZ 1.1.1), packaged with py-wacz's indexer (cdxj-indexer, warcio).

Layout: `archive/<warc>` (every WARC of the capture, stored uncompressed in the zip as the
spec asks), `indexes/index.cdx.gz` + `indexes/index.idx` (the sorted, compressed CDXJ index
py-wacz writes), `pages/pages.jsonl` (the capture's page: URL, title, time),
`evidence/manifest.json` (the capture's manifest, so the WACZ carries the hashes every WARC
must have), `datapackage.json` (every file's sha256 and size) and `datapackage-digest.json`
(the sha256 of `datapackage.json`, plus the manifest's timestamp tokens under `timestamps`
once an authority granted them: the same proof as the tokens stored beside the manifest).
ReplayWeb.page and pywb open it.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from wacz.waczindexer import WACZIndexer

from shared.evidence.manifest import Manifest

MANIFEST_ENTRY = "evidence/manifest.json"
DIGEST_ENTRY = "datapackage-digest.json"
DATAPACKAGE_ENTRY = "datapackage.json"
INDEX_LINES = 1024
"""CDXJ lines per compressed block (py-wacz's and ArchiveWeb.page's default)."""


@dataclass(frozen=True)
class TimestampProof:
    """A timestamp token over the manifest, as datapackage-digest.json carries it."""

    authority: str
    token_der: bytes
    """The authority's TimeStampResp (DER)."""
    chain_pem: str
    """The certificates from the token's signer to its root."""
    time: str
    """The time the authority certified (ISO 8601)."""

    def as_json(self, fingerprint: str) -> dict[str, str]:
        return {
            "authority": self.authority,
            "over": MANIFEST_ENTRY,
            "hash": f"sha256:{fingerprint}",
            "time": self.time,
            "token": base64.b64encode(self.token_der).decode(),
            "chain": self.chain_pem,
        }


def _zinfo(name: str, *, deflate: bool) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, datetime.now(UTC).timetuple()[:6])
    info.compress_type = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    return info


def archive_names(warcs: Sequence[tuple[str, Path]]) -> list[str]:
    """`archive/<name>` for each (plugin, file): the file's name, prefixed with its plugin
    when two plugins wrote files of the same name."""
    names: list[str] = []
    for plugin, path in warcs:
        name = f"archive/{path.name}"
        if name in names:
            name = f"archive/{plugin}-{path.name}"
        names.append(name)
    return names


def build(
    out: Path,
    manifest: Manifest,
    manifest_bytes: bytes,
    warcs: Sequence[tuple[str, Path]],
    proofs: Sequence[TimestampProof] = (),
) -> None:
    """Write the WACZ of a capture to `out` from its WARC files (plugin, local path)."""
    if not warcs:
        raise ValueError("a WACZ needs at least one WARC")
    names = archive_names(warcs)
    created = manifest.finished_at.astimezone(UTC)
    with (
        tempfile.TemporaryDirectory(dir=out.parent) as tmp,
        zipfile.ZipFile(out, "w", allowZip64=True) as z,
    ):
        # the index names each WARC by its file name: link them under their names in the WACZ
        paths = []
        for (_, path), name in zip(warcs, names, strict=True):
            link = Path(tmp) / Path(name).name
            link.symlink_to(path.resolve())
            paths.append(str(link))
        idx = io.BytesIO()
        text = io.TextIOWrapper(idx, "utf-8", write_through=True)
        with (
            z.open(_zinfo("indexes/index.cdx.gz", deflate=False), "w") as data,
            contextlib.redirect_stdout(io.StringIO()),  # py-wacz prints its progress
        ):
            indexer = WACZIndexer(
                text, paths, sort=True, post_append=True, compress=data, lines=INDEX_LINES,
                digest_records=True, fields="referrer", data_out_name="index.cdx.gz",
                hash_type="sha256", main_url="", detect_pages=False, extract_text=False,
            )  # fmt: skip
            indexer.process_all()
        z.writestr(_zinfo("indexes/index.idx", deflate=True), idx.getvalue())
        for (_, path), name in zip(warcs, names, strict=True):
            with path.open("rb") as src, z.open(_zinfo(name, deflate=False), "w") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        z.writestr(_zinfo("pages/pages.jsonl", deflate=True), _pages(manifest, created))
        z.writestr(_zinfo(MANIFEST_ENTRY, deflate=True), manifest_bytes)
        res = SimpleNamespace(
            desc=f"Capture {manifest.snapshot_id} of {manifest.url}",
            title=manifest.title or manifest.url,
            date=created.strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
        package = json.loads(indexer.generate_datapackage(res, z))
        package["mainPageURL"] = manifest.final_url or manifest.url
        package_bytes = json.dumps(package, indent=2).encode()
        z.writestr(_zinfo(DATAPACKAGE_ENTRY, deflate=True), package_bytes)
        z.writestr(
            _zinfo(DIGEST_ENTRY, deflate=True), _digest(package_bytes, manifest_bytes, proofs)
        )


def _pages(manifest: Manifest, created: datetime) -> bytes:
    started = (manifest.started_at or created).astimezone(UTC)
    header = {"format": "json-pages-1.0", "id": "pages", "title": "Pages"}
    page = {
        "id": manifest.snapshot_id,
        "url": manifest.final_url or manifest.url,
        "title": manifest.title or manifest.url,
        "ts": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    return (json.dumps(header) + "\n" + json.dumps(page) + "\n").encode()


def _digest(package_bytes: bytes, manifest_bytes: bytes, proofs: Sequence[TimestampProof]) -> bytes:
    fp = hashlib.sha256(manifest_bytes).hexdigest()
    digest: dict[str, Any] = {
        "path": DATAPACKAGE_ENTRY,
        "hash": "sha256:" + hashlib.sha256(package_bytes).hexdigest(),
    }
    if proofs:
        digest["timestamps"] = [p.as_json(fp) for p in proofs]
    return json.dumps(digest, indent=2).encode()


def with_proofs(src: Path, out: Path, proofs: Sequence[TimestampProof]) -> None:
    """Copy the WACZ at `src` to `out` with `proofs` in its datapackage-digest.json (replacing
    those it had): the files it packages are unchanged."""
    with zipfile.ZipFile(src) as old, zipfile.ZipFile(out, "w", allowZip64=True) as new:
        for info in old.infolist():
            if info.filename == DIGEST_ENTRY:
                continue
            with (
                old.open(info) as a,
                new.open(_zinfo(info.filename, deflate=bool(info.compress_type)), "w") as b,
            ):
                shutil.copyfileobj(a, b, 1 << 20)
        package_bytes = old.read(DATAPACKAGE_ENTRY)
        manifest_bytes = old.read(MANIFEST_ENTRY)
        new.writestr(
            _zinfo(DIGEST_ENTRY, deflate=True), _digest(package_bytes, manifest_bytes, proofs)
        )
