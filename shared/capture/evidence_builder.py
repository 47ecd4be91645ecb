"""The capture's evidence, built by the worker that captured, after its last hook: the
manifest (every file of the snapshot, this attempt's and those kept from earlier ones), then
the WACZ of its WARCs carrying that manifest, each uploaded and sent as an Artifact record,
then an EvidenceReport with what the check of the WACZ found. Each is named after its own
sha256 (a retried attempt's are new files beside the earlier's, none rewritten). Timestamps
come later, on their own (`shared/capture/timestamper.py`): an authority that is down never
holds a capture back, and a late token is a file of its own (the WACZ is never rebuilt).
EVIDENCE_ENABLED=false leaves all of it out, WACZ_ENABLED=false the WACZ (the worker's
`evidence` and `wacz`). Order and reasons: docs/architecture.md, "Evidence".
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from shared.capture.artifacts import artifact_key, snapshot_prefix
from shared.evidence import wacz
from shared.evidence.manifest import (
    EVIDENCE_PLUGIN,
    WACZ_PATH,
    Manifest,
    ManifestArtifact,
    Software,
    fingerprint,
    latest_artifacts,
    manifest_path,
    public_settings,
    software_version,
    wacz_path,
)
from shared.evidence.verify import VerifyVerdict, check_wacz
from shared.filehash import sha256_file
from shared.hooks.config import load_plugin_config
from shared.hooks.records import ArchiveResultRecord, ArtifactRecord, BinaryRecord
from shared.hooks.snapshot_runner import HookSpec
from shared.messages import CaptureJob, EvidenceReport
from shared.s3 import ObjectStore

log = logging.getLogger(__name__)

CAPTURE_SETTINGS = (
    "USER_AGENT", "ALLOW_PRIVATE_TARGETS", "TIMEOUT", "BROWSER_EXECUTABLE",
    "BROWSER_VIEWPORT_WIDTH", "BROWSER_VIEWPORT_HEIGHT", "BROWSER_MAX_RESPONSE_MB",
    "BROWSER_SUBRESOURCE_TIMEOUT_SECONDS", "BROWSER_WARM_ORIGINS", "BROWSER_MAX_RENDERER_MB",
    "BROWSER_WARC_MAX_MB",
    "HOOK_MEMORY_LIMIT_MB", "HOOK_CPU_LIMIT_SECONDS", "MAX_BYTES_HARD_LIMIT", "TSA_URLS",
    "WACZ_ENABLED",
)  # fmt: skip
"""Worker settings that shape what a capture keeps, written into its manifest when set."""


def as_entry(a: ArtifactRecord) -> ManifestArtifact:
    """A stored file as the manifest lists it."""
    return ManifestArtifact(
        key=a.s3_key, plugin=a.plugin, path=a.path, kind=a.kind, content_type=a.content_type,
        bytes=a.bytes, sha256=a.sha256, truncated=a.truncated,
    )  # fmt: skip


def capture_settings(env: Mapping[str, str], hooks: Sequence[HookSpec]) -> dict[str, str]:
    """The settings that shaped the capture: each plugin's that ran (its value or its
    config.json default) and the worker's own when set; never a secret."""
    values: dict[str, str] = {}
    for plugin_dir in sorted({h.path.parent for h in hooks}):
        for name, value in load_plugin_config(plugin_dir).values(env).items():
            values[name] = value if isinstance(value, str) else _text(value)
    values.update({n: env[n] for n in CAPTURE_SETTINGS if n in env})
    return public_settings(values, values)


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def started_at(results: Mapping[str, ArchiveResultRecord]) -> datetime | None:
    """When the attempt's first hook started."""
    times = [r.started_at for r in results.values() if r.started_at is not None]
    return min(times) if times else None


class EvidenceBuilder:
    """Builds, stores and reports one attempt's manifest and WACZ."""

    def __init__(
        self,
        store: ObjectStore,
        prefix: str,
        job: CaptureJob,
        out_dir: Path,
        local_files: Mapping[str, Path],
    ) -> None:
        self.store, self.prefix, self.job, self.out_dir = store, prefix, job, out_dir
        self.local = local_files
        """This attempt's uploaded files by key (the WARCs are packaged from them)."""

    def key(self, path: str) -> str:
        folder = snapshot_prefix(self.prefix, self.job.link_id, self.job.snapshot_id)
        return artifact_key(folder, EVIDENCE_PLUGIN, path)

    def manifest(
        self,
        artifacts: Iterable[ArtifactRecord],
        results: Mapping[str, ArchiveResultRecord],
        software: Software,
        settings: dict[str, str],
        final_url: str | None,
        title: str | None,
    ) -> Manifest | None:
        """The attempt's manifest (None when the snapshot kept no file at all)."""
        entries = latest_artifacts(
            (as_entry(a) for a in self.job.kept), (as_entry(a) for a in artifacts)
        )
        if not entries:
            return None
        job = self.job
        return Manifest(
            link_id=job.link_id, snapshot_id=job.snapshot_id, attempt=job.attempt, url=job.url,
            final_url=final_url or job.final_url, title=title, started_at=started_at(results),
            finished_at=datetime.now(UTC), software=software, settings=settings,
            artifacts=entries,
        )  # fmt: skip

    async def store_manifest(self, data: bytes) -> ArtifactRecord:
        """Upload the manifest (kind `manifest`)."""
        path = manifest_path(fingerprint(data))
        size, digest = await self.store.put_bytes(self.key(path), data, "application/json")
        return self.artifact("manifest", path, "application/json", size, digest)

    def artifact(self, kind: str, path: str, ctype: str, size: int, digest: str) -> ArtifactRecord:
        """The Artifact record of an evidence file this attempt stored."""
        return ArtifactRecord(
            plugin=EVIDENCE_PLUGIN, kind=kind, path=path, s3_key=self.key(path),
            content_type=ctype, bytes=size, sha256=digest,
        )  # fmt: skip

    async def warc_files(self, manifest: Manifest) -> list[tuple[str, Path]]:
        """Every WARC of the capture as a local file: this attempt's where it made them,
        the earlier attempts' downloaded from the store."""
        folder = self.out_dir / ".evidence"
        folder.mkdir(parents=True, exist_ok=True)
        files: list[tuple[str, Path]] = []
        for n, warc in enumerate(manifest.warcs()):
            local = self.local.get(warc.key)
            if local is None:
                local = folder / f"kept-{n}-{Path(warc.path).name}"
                await self.store.download_file(warc.key, local)
            files.append((warc.plugin, local))
        return files

    async def store_wacz(
        self, manifest: Manifest, data: bytes, verdict: VerifyVerdict
    ) -> ArtifactRecord | None:
        """Package, check and upload the WACZ (kind `wacz`); None when the capture kept no
        WARC or its WARCs could not be packaged (logged and in the verdict's detail)."""
        warcs = await self.warc_files(manifest)
        if not warcs:
            return None
        out = self.out_dir / ".evidence" / WACZ_PATH
        try:
            await asyncio.to_thread(_build_and_check, out, manifest, data, warcs, verdict)
        except Exception as exc:  # a WARC cut mid-record, a full disk: the capture stands
            log.warning("%s: no WACZ: %s", self.job.snapshot_id, exc)
            verdict.add(WACZ_PATH, True, f"not made: {type(exc).__name__}: {str(exc)[:200]}")
            return None
        path = wacz_path((await asyncio.to_thread(sha256_file, out))[1])
        ctype = "application/wacz"
        size, digest = await self.store.put_file(self.key(path), out, ctype)
        return self.artifact("wacz", path, ctype, size, digest)

    async def build(
        self, manifest: Manifest, report_ids: Mapping[str, Any], *, wacz: bool = True
    ) -> tuple[list[ArtifactRecord], EvidenceReport]:
        """Store the attempt's evidence (its manifest, see `manifest`): its Artifact records
        and its report (raises StorageError when the store fails, like any upload); the WACZ
        only with `wacz` (WACZ_ENABLED)."""
        data = manifest.to_bytes()
        stored = [await self.store_manifest(data)]
        verdict = VerifyVerdict()
        verdict.add(stored[0].path, True, f"{len(manifest.artifacts)} files")
        package = await self.store_wacz(manifest, data, verdict) if wacz else None
        if package is not None:
            stored.append(package)
        report = EvidenceReport(
            **report_ids, manifest_key=stored[0].s3_key,
            fingerprint=fingerprint(data), wacz_key=package.s3_key if package else None,
            verdict="verified" if verdict.ok else "mismatch", detail=verdict.summary(),
            checked_at=datetime.now(UTC),
        )  # fmt: skip
        return stored, report


def _build_and_check(
    out: Path,
    manifest: Manifest,
    data: bytes,
    warcs: list[tuple[str, Path]],
    verdict: VerifyVerdict,
) -> None:
    wacz.build(out, manifest, data, warcs)
    check_wacz(verdict, out, roots=[], name=WACZ_PATH)


def software_of(service: str, worker: str, binaries: Sequence[BinaryRecord] | None) -> Software:
    """This worker as the manifest names it."""
    versions = {b.name: b.version for b in binaries or () if b.status == "succeeded" and b.version}
    return Software(version=software_version(), service=service, worker=worker, binaries=versions)
