"""The checks behind `dla verify` and the verdict the writer records: every hash recomputed,
the manifest, the WACZ's own digests and each timestamp token against its authority's chain.

Each check is a Finding (what was checked, whether it holds, why); a verdict holds when
every finding does. Nothing here reads the network: callers hand in bytes or files.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509

from shared.evidence import tsa
from shared.evidence.manifest import Manifest, ManifestArtifact, fingerprint, parse
from shared.evidence.wacz import DATAPACKAGE_ENTRY, DIGEST_ENTRY, MANIFEST_ENTRY

CHUNK = 1 << 20


@dataclass(frozen=True)
class Finding:
    """One check: of what, whether it holds, and the detail a person reads."""

    what: str
    ok: bool
    detail: str


@dataclass
class VerifyVerdict:
    """Every finding of one verification."""

    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when there is something checked and every finding holds."""
        return bool(self.findings) and all(f.ok for f in self.findings)

    def add(self, what: str, ok: bool, detail: str) -> bool:
        self.findings.append(Finding(what, ok, detail))
        return ok

    def summary(self) -> str:
        """One line: what holds, or the first things that do not."""
        bad = [f for f in self.findings if not f.ok]
        if not bad:
            n = len(self.findings)
            return f"{n} check{'' if n == 1 else 's'} passed"
        return "; ".join(f"{f.what}: {f.detail}" for f in bad[:3]) + (
            f" (+{len(bad) - 3} more)" if len(bad) > 3 else ""
        )


def sha256_of(chunks: Iterable[bytes]) -> tuple[str, int]:
    """(hex digest, size) of a stream of chunks."""
    h, n = hashlib.sha256(), 0
    for chunk in chunks:
        h.update(chunk)
        n += len(chunk)
    return h.hexdigest(), n


def file_chunks(path: Path) -> Iterable[bytes]:
    """A file's bytes in chunks."""
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            yield chunk


def check_manifest(
    verdict: VerifyVerdict, data: bytes, expected: str | None = None, what: str = "manifest.json"
) -> Manifest | None:
    """Parse the manifest; its fingerprint must be `expected` when one is given."""
    fp = fingerprint(data)
    try:
        manifest = parse(data)
    except ValueError as exc:
        verdict.add(what, False, f"not a manifest: {str(exc)[:200]}")
        return None
    if expected is not None and fp != expected:
        verdict.add(what, False, f"fingerprint {fp} is not the recorded {expected}")
        return manifest
    verdict.add(what, True, f"fingerprint {fp}, {len(manifest.artifacts)} files listed")
    return manifest


def check_artifact(
    verdict: VerifyVerdict, entry: ManifestArtifact, chunks: Iterable[bytes] | None
) -> bool:
    """A listed file's bytes against its manifest entry (None: the file could not be had)."""
    if chunks is None:
        return verdict.add(entry.key, False, "missing")
    digest, size = sha256_of(chunks)
    if digest != entry.sha256 or size != entry.bytes:
        return verdict.add(
            entry.key, False, f"sha256 {digest} ({size} bytes), manifest says {entry.sha256}"
            f" ({entry.bytes} bytes)"
        )  # fmt: skip
    return verdict.add(entry.key, True, f"sha256 {digest}")


def check_token(
    verdict: VerifyVerdict,
    authority: str,
    response_der: bytes,
    manifest_bytes: bytes,
    roots: list[x509.Certificate],
    what: str | None = None,
) -> tsa.Token | None:
    """A timestamp token over the manifest, against the trusted roots."""
    label = what or f"timestamp {authority}"
    try:
        token = tsa.check(authority, response_der, manifest_bytes, roots)
    except tsa.TimestampError as exc:
        verdict.add(label, False, str(exc))
        return None
    verdict.add(label, True, f"{token.time.isoformat()} by {authority} (serial {token.serial})")
    return token


def check_wacz(
    verdict: VerifyVerdict, path: Path, roots: list[x509.Certificate], name: str | None = None
) -> tuple[Manifest | None, bytes | None]:
    """A WACZ: datapackage-digest.json -> datapackage.json -> every file's sha256 and size;
    the manifest it carries; each WARC's sha256 against the manifest; the timestamp tokens its
    digest file carries, over that manifest. Returns the manifest and its bytes."""
    label = name or path.name
    try:
        z = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        verdict.add(label, False, f"not a zip file: {exc}")
        return None, None
    with z:
        names = set(z.namelist())
        if not {DATAPACKAGE_ENTRY, DIGEST_ENTRY} <= names:
            verdict.add(label, False, "no datapackage.json or datapackage-digest.json")
            return None, None
        package_bytes = z.read(DATAPACKAGE_ENTRY)
        try:
            digest = json.loads(z.read(DIGEST_ENTRY))
            package = json.loads(package_bytes)
            resources = {r["path"]: r for r in package["resources"]}
        except (ValueError, KeyError, TypeError) as exc:
            verdict.add(label, False, f"unreadable datapackage: {exc}")
            return None, None
        want = digest.get("hash") if isinstance(digest, dict) else None
        got = "sha256:" + hashlib.sha256(package_bytes).hexdigest()
        said = got if want == got else f"{got}, datapackage-digest.json says {want}"
        verdict.add(f"{label}:{DATAPACKAGE_ENTRY}", want == got, said)
        for entry in sorted(names - {DATAPACKAGE_ENTRY, DIGEST_ENTRY}):
            res = resources.get(entry)
            if entry.endswith("/"):
                continue
            if res is None:
                verdict.add(f"{label}:{entry}", False, "not listed in datapackage.json")
                continue
            try:
                digest_hex, size = member_sha256(z, entry)
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                verdict.add(f"{label}:{entry}", False, f"unreadable: {exc}")
                continue
            ok = res.get("hash") == f"sha256:{digest_hex}" and res.get("bytes") == size
            verdict.add(f"{label}:{entry}", ok, f"sha256 {digest_hex}" if ok else
                        f"sha256 {digest_hex} ({size} bytes), datapackage.json says"
                        f" {res.get('hash')} ({res.get('bytes')} bytes)")  # fmt: skip
        for missing in sorted(set(resources) - names):
            verdict.add(f"{label}:{missing}", False, "listed in datapackage.json, not in the zip")
        if MANIFEST_ENTRY not in names:
            verdict.add(label, False, f"no {MANIFEST_ENTRY}")
            return None, None
        manifest_bytes = z.read(MANIFEST_ENTRY)
        manifest = check_manifest(verdict, manifest_bytes, what=f"{label}:{MANIFEST_ENTRY}")
        if manifest is None:
            return None, manifest_bytes
        archived = {}
        for entry in names:
            if entry.startswith("archive/"):
                try:
                    archived[member_sha256(z, entry)[0]] = entry
                except (zipfile.BadZipFile, OSError, EOFError):
                    continue  # reported above
        for warc in manifest.warcs():
            inside = archived.get(warc.sha256)
            said = f"in the WACZ as {inside}" if inside else "no file in archive/ has its sha256"
            verdict.add(f"{label}:{warc.key}", inside is not None, said)
        for proof in proofs_of(digest):
            check_token(verdict, proof[0], proof[1], manifest_bytes, roots,
                        what=f"{label}: timestamp {proof[0]}")  # fmt: skip
        return manifest, manifest_bytes


def member_sha256(z: zipfile.ZipFile, entry: str) -> tuple[str, int]:
    """(hex digest, size) of a zip member (BadZipFile when its CRC does not match)."""
    with z.open(entry) as f:
        return sha256_of(iter(lambda: f.read(CHUNK), b""))


def proofs_of(digest: object) -> Sequence[tuple[str, bytes]]:
    """(authority, token DER) of each timestamp a datapackage-digest.json carries."""
    if not isinstance(digest, dict):
        return []
    out = []
    for entry in digest.get("timestamps") or []:
        if isinstance(entry, dict) and isinstance(entry.get("token"), str):
            try:
                out.append((str(entry.get("authority", "?")), base64.b64decode(entry["token"])))
            except ValueError:
                out.append((str(entry.get("authority", "?")), b""))
    return out
