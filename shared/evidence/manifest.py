"""`manifest.json`: what one capture kept, one file binding its files together.

Every artifact of the snapshot (key, plugin, path, kind, size, sha256, content type, whether
it was cut short), the capture's URL and final URL, its times, the software and the settings
that shaped it (never a secret). The sha256 of the manifest's bytes as stored is the
capture's *fingerprint*; timestamp tokens are over those bytes. The evidence files made from
the manifest (the WACZ, the tokens) are not in it: they come after it (docs/architecture.md,
"Evidence"). Every evidence file is named after its own bytes' sha256 (`manifest_path`,
`wacz_path`, `token_stem`), so a stored one never changes: another version is another key.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from importlib import metadata
from itertools import chain
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

FORMAT = "dla-manifest/1"
EVIDENCE_PLUGIN = "evidence"
"""The pseudo-plugin folder of a snapshot's evidence files (manifest, WACZ, tokens)."""
WACZ_PATH = "capture.wacz"
"""The WACZ's name where a file name is all there is (a download, a check's label)."""
NAMED_BY = 16
"""Hex digits of a file's sha256 in its evidence name."""

SECRET_NAME = re.compile(r"(SECRET|TOKEN|PASSWORD|PASSWD|COOKIE|CREDENTIAL|AUTH|_KEY$|^AWS_)", re.I)
"""Setting names never written into a manifest, whatever their value."""


class ManifestArtifact(BaseModel):
    """One file of the capture."""

    key: str
    """Object key in the bucket."""
    plugin: str
    path: str
    """Path in the plugin's folder."""
    kind: str
    content_type: str
    bytes: int
    sha256: str
    truncated: bool = False


class Software(BaseModel):
    """What made the capture."""

    name: str = "discourse-link-archiver"
    version: str
    service: str
    worker: str
    binaries: dict[str, str] = Field(default_factory=dict)
    """Versions of the programs the plugins ran (chromium, yt-dlp, ffmpeg...)."""


class Manifest(BaseModel):
    """The capture's manifest (`manifest.json`)."""

    format: str = FORMAT
    link_id: int
    snapshot_id: str
    attempt: int
    url: str
    final_url: str | None = None
    title: str | None = None
    started_at: datetime | None = None
    finished_at: datetime
    software: Software
    settings: dict[str, str] = Field(default_factory=dict)
    """The settings that shaped the capture (name -> value as the hooks saw it)."""
    artifacts: list[ManifestArtifact]

    def to_bytes(self) -> bytes:
        """The stored form (sorted keys, so the same manifest is the same bytes)."""
        data = self.model_dump(mode="json")
        return (json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode()

    def warcs(self) -> list[ManifestArtifact]:
        """The WARC files, the WACZ's archive/ (kind `warc`)."""
        return [a for a in self.artifacts if a.kind == "warc"]


def fingerprint(manifest_bytes: bytes) -> str:
    """The capture's fingerprint: sha256 (hex) of the manifest as stored."""
    return hashlib.sha256(manifest_bytes).hexdigest()


def manifest_path(fingerprint: str) -> str:
    """The manifest's path in the evidence folder, named after its fingerprint."""
    return f"manifest-{fingerprint[:NAMED_BY]}.json"


def wacz_path(sha256: str) -> str:
    """The WACZ's path in the evidence folder, named after its sha256."""
    return f"capture-{sha256[:NAMED_BY]}.wacz"


def token_folder(fingerprint: str) -> str:
    """The folder (in the evidence folder) of the timestamp tokens over one manifest."""
    return f"timestamps/{fingerprint[:NAMED_BY]}"


def token_stem(fingerprint: str, authority: str, token_sha256: str) -> str:
    """A token's path without its suffix (`.tsr` the reply, `.pem` its chain): the
    manifest's folder, the authority's host and a tag of its URL, the token's sha256."""
    host = re.sub(r"[^a-z0-9]+", "-", (urlsplit(authority).hostname or "tsa").lower())[:40]
    tag = hashlib.sha256(authority.encode()).hexdigest()[:8]
    return f"{token_folder(fingerprint)}/{host}-{tag}-{token_sha256[:NAMED_BY]}"


def parse(manifest_bytes: bytes) -> Manifest:
    """A stored manifest (raises ValueError when it is not one)."""
    return Manifest.model_validate_json(manifest_bytes)


def software_version() -> str:
    """This software's version (the installed package's)."""
    try:
        return metadata.version("discourse-link-archiver")
    except metadata.PackageNotFoundError:
        return "unknown"


def public_settings(env: Mapping[str, str], names: Iterable[str]) -> dict[str, str]:
    """The named settings present in env, secrets left out by name."""
    return {n: env[n] for n in sorted(set(names)) if n in env and not SECRET_NAME.search(n)}


def latest_artifacts(
    earlier: Iterable[ManifestArtifact], now: Iterable[ManifestArtifact]
) -> list[ManifestArtifact]:
    """The snapshot's files: those of earlier attempts (oldest first), each replaced by a
    later one of the same plugin and path (a re-run hook's file, at a key of its own run),
    then by this run's; evidence files left out; sorted by key."""
    latest = {(a.plugin, a.path): a for a in chain(earlier, now)}
    return sorted((a for a in latest.values() if a.plugin != EVIDENCE_PLUGIN), key=lambda a: a.key)
