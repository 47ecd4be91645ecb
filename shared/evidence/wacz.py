"""One WACZ per capture (WACZ 1.1.1), packaged with py-wacz's indexer (cdxj-indexer, warcio).

Layout: `archive/<warc>` (every WARC of the capture, stored uncompressed in the zip as the
spec asks), `indexes/index.cdx.gz` + `indexes/index.idx` (the sorted, compressed CDXJ index
py-wacz writes), `pages/pages.jsonl` (the capture's page: URL, title, time),
`evidence/manifest.json` (the capture's manifest, so the WACZ carries the hashes every WARC
must have), `datapackage.json` (every file's sha256 and size) and `datapackage-digest.json`
(the sha256 of `datapackage.json`). It is built once, when the capture ends, and never
rewritten: the manifest's timestamp tokens, which come later, are files of their own beside
it (WACZs made by earlier versions carried them under `timestamps` in
datapackage-digest.json; `dla verify` still checks those). ReplayWeb.page and pywb open it.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

from shared.evidence.manifest import Manifest

MANIFEST_ENTRY = "evidence/manifest.json"
DIGEST_ENTRY = "datapackage-digest.json"
DATAPACKAGE_ENTRY = "datapackage.json"
INDEX_LINES = 1024
"""CDXJ lines per compressed block (py-wacz's and ArchiveWeb.page's default)."""


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
            # here, not at the top: wacz's indexer pulls in pkg_resources (~0.2 s), which
            # `dla verify` and the web never need
            from wacz.waczindexer import WACZIndexer

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
        digest = {
            "path": DATAPACKAGE_ENTRY,
            "hash": "sha256:" + hashlib.sha256(package_bytes).hexdigest(),
        }
        z.writestr(_zinfo(DIGEST_ENTRY, deflate=True), json.dumps(digest, indent=2).encode())


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
