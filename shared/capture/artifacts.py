"""What kind of artifact a hook's output file is, and the S3 key it is stored under."""

from __future__ import annotations

import mimetypes
from pathlib import PurePosixPath

_BY_NAME: dict[tuple[str, str], str] = {
    ("fetch", "headers.json"): "headers",
    ("fetch", "fetch.warc.gz"): "warc",
    ("metadata", "metadata.json"): "metadata",
    ("readable", "article.html"): "article",
    ("readable", "readable.json"): "readable_json",
    ("reddit", "page.html"): "reddit_html",
    ("reddit", "thread.json"): "reddit_json",
    ("reddit", "thread.html"): "reddit_thread",
    ("reddit", "post.json"): "reddit_post",
    ("reddit", "reddit.json"): "reddit_sources",
}
_BY_PREFIX: dict[tuple[str, str], str] = {
    ("fetch", "body"): "raw_response",
}
_BY_SUFFIX: dict[str, str] = {
    ".stderr.log": "log",
    ".png": "screenshot",
    ".pdf": "pdf",
    ".mp4": "video",
    ".webm": "video",
    ".mkv": "video",
    ".jpg": "thumb",
    ".webp": "thumb",
    ".info.json": "metadata_json",
    ".txt": "text",
}


def artifact_kind(plugin: str, relpath: str) -> str:
    """The artifact kind of a plugin's output file (raw_response, headers, screenshot, ...)."""
    name = PurePosixPath(relpath).name
    if (plugin, name) in _BY_NAME:
        return _BY_NAME[(plugin, name)]
    for (p, prefix), kind in _BY_PREFIX.items():
        if p == plugin and name.startswith(prefix):
            return kind
    for suffix, kind in _BY_SUFFIX.items():
        if name.endswith(suffix):
            return kind
    return f"{plugin}_file"


def content_type(relpath: str) -> str:
    """MIME type guessed from the file name."""
    if relpath.endswith(".log"):
        return "text/plain; charset=utf-8"
    guessed, _ = mimetypes.guess_type(relpath)
    return guessed or "application/octet-stream"


def artifact_key(prefix: str, link_id: int, snapshot_id: str, plugin: str, relpath: str) -> str:
    """`<S3_PREFIX><link_id>/<snapshot_id>/<plugin>/<file>`."""
    return f"{prefix}{link_id}/{snapshot_id}/{plugin}/{relpath}"
