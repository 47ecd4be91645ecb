"""Where a snapshot's files go in S3 (the one place the key layout is spelled) and their
content types. What *kind* each file is, its plugin declares (``x-artifacts`` in its
``config.json``, read by ``shared.hooks.config.PluginConfig.artifact_kind``)."""

from __future__ import annotations

import mimetypes


def snapshot_prefix(prefix: str, link_id: int, snapshot_id: str) -> str:
    """`<S3_PREFIX><link_id>/<snapshot_id>/`: every object of one snapshot."""
    return f"{prefix}{link_id}/{snapshot_id}/"


def artifact_key(prefix: str, link_id: int, snapshot_id: str, plugin: str, relpath: str) -> str:
    """`<S3_PREFIX><link_id>/<snapshot_id>/<plugin>/<file>`."""
    return f"{snapshot_prefix(prefix, link_id, snapshot_id)}{plugin}/{relpath}"


def meta_key(prefix: str, link_id: int, snapshot_id: str, service: str) -> str:
    """`<S3_PREFIX><link_id>/<snapshot_id>/<service>.meta.json`: a worker's summary."""
    return f"{snapshot_prefix(prefix, link_id, snapshot_id)}{service}.meta.json"


def content_type(relpath: str) -> str:
    """MIME type guessed from the file name."""
    if relpath.endswith(".log"):
        return "text/plain; charset=utf-8"
    guessed, _ = mimetypes.guess_type(relpath)
    return guessed or "application/octet-stream"
