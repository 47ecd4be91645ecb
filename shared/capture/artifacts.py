"""Where a snapshot's files go in S3 (the one place the key layout is spelled) and their
content types. What *kind* each file is, its plugin declares (``x-artifacts`` in its
``config.json``, read by ``shared.hooks.config.PluginConfig.artifact_kind``).

No key is ever written twice with different bytes (docs/architecture.md, "The capture
pipeline"): a job's first delivery (attempt 1, run 1) writes its files at the snapshot's
own folder, every later delivery (a retried attempt, or a run redelivered after a failure)
in a folder of its own that names it, since a re-run hook may write other bytes under the
same name; evidence files sit at the snapshot's folder, each named after its own sha256."""

from __future__ import annotations

import mimetypes


def snapshot_prefix(prefix: str, link_id: int, snapshot_id: str) -> str:
    """`<S3_PREFIX><link_id>/<snapshot_id>/`: every object of one snapshot."""
    return f"{prefix}{link_id}/{snapshot_id}/"


def run_prefix(prefix: str, link_id: int, snapshot_id: str, attempt: int, run: int) -> str:
    """Where one delivery of a job attempt writes its files: the snapshot's folder for the
    first (attempt 1, run 1, as before issue 32), `<snapshot>/attempt-<attempt>.<run>/` for
    any other."""
    folder = snapshot_prefix(prefix, link_id, snapshot_id)
    return folder if (attempt, run) == (1, 1) else f"{folder}attempt-{attempt}.{run}/"


def artifact_key(folder: str, plugin: str, relpath: str) -> str:
    """`<folder><plugin>/<file>`, folder a `snapshot_prefix` or `run_prefix`."""
    return f"{folder}{plugin}/{relpath}"


def meta_key(folder: str, service: str) -> str:
    """`<folder><service>.meta.json`: a worker's summary of its run (folder a `run_prefix`)."""
    return f"{folder}{service}.meta.json"


def content_type(relpath: str) -> str:
    """MIME type guessed from the file name."""
    if relpath.endswith(".log"):
        return "text/plain; charset=utf-8"
    guessed, _ = mimetypes.guess_type(relpath)
    return guessed or "application/octet-stream"
