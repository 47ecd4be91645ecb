"""A small archive built through the writer's real apply path, for the web's tests.

Links (ids in order of creation):
  1 reddit thread, archived, hostile title, screenshot + raw HTML + article, quoted once
  2 a page that answered 404: failed, E_FETCH_HTTP_404
  3 a page on a non-allowlisted domain: skipped (never listed)
  4 an IDN domain (bücher.de), archived, text about sourdough
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from services.writer.db import open_db
from shared.hooks.records import (
    ArchiveResultRecord,
    ArtifactRecord,
    HookRecord,
    MetadataRecord,
    TextRecord,
)
from testkit.writer_harness import Harness, done, event, occ, post

REDDIT = "https://www.reddit.com/r/Breadit/comments/x1/sourdough_starter/"
MISSING = "https://x.com/someone/status/404"
SKIPPED = "https://example.com/not-deletable"
IDN = "https://xn--bcher-kva.de/brot"
HOSTILE_TITLE = "<script>window.__pwned=1</script> Sourdough starter thread"
HOSTILE_TEXT = (
    "Feeding a sourdough starter twice a day keeps it lively. "
    '<img src=x onerror="window.__pwned=1"> javascript:alert(1) "quoted" AND OR * -'
)
HOSTILE_ARTICLE = (
    "<h2>Starter care</h2><p>Keep the <b>sourdough</b> warm.</p>"
    '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1">'
    '<a href="javascript:window.__pwned=1">click</a>'
    '<a href="https://example.org/ok">a real link</a>'
    '<iframe src="javascript:window.__pwned=1"></iframe><style>body{display:none}</style>'
)
PNG_1x1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cfc0f01f0005000201a5f1d2ea0000000049454e44ae426082"
)
FETCH = "on_Snapshot__61_fetch.py"
META = "on_Snapshot__81_htmlmeta.py"


@dataclass(frozen=True)
class StoredFile:
    """An artifact's bytes, for tests that put them in a real bucket."""

    s3_key: str
    data: bytes
    content_type: str


def _artifact(
    plugin: str, kind: str, path: str, data: bytes, ctype: str, link: int
) -> ArtifactRecord:
    return ArtifactRecord(
        plugin=plugin,
        kind=kind,
        path=path,
        s3_key=f"archives/{link}/s/{plugin}/{path}",
        content_type=ctype,
        bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
    )


def _result(
    hook: str, status: str, code: str | None = None, output: str = ""
) -> ArchiveResultRecord:
    plugin = hook.split("_")[-1].split(".")[0]
    return ArchiveResultRecord(
        status=status,
        plugin=plugin,
        hook=hook,
        error_code=code,
        output_str=output,  # type: ignore[arg-type]
    )


def files() -> list[StoredFile]:
    """The bytes of link 1's artifacts, by S3 key."""
    return [
        StoredFile("archives/1/s/screenshot/screenshot.png", PNG_1x1, "image/png"),
        StoredFile(
            "archives/1/s/fetch/body.html",
            b"<html><script>window.__pwned=1</script>raw</html>",
            "text/html",
        ),
        StoredFile("archives/1/s/readable/article.html", HOSTILE_ARTICLE.encode(), "text/html"),
    ]


def build(db_path: Path) -> Harness:
    """Fill a database at db_path; returns the harness (its connection is left open)."""
    h = Harness(open_db(db_path))
    h.apply(post("g1", occ(REDDIT), occ(MISSING), occ(SKIPPED, policy="skip")))
    h.apply(post("g2", occ(REDDIT, in_quote=True), occ(IDN)))
    jobs = {j.link_id: h.job(j.job_id) for j in h.dispatch()}
    stored = {f.s3_key: f for f in files()}
    one = jobs[1]
    records: list[HookRecord] = [
        _artifact("screenshot", "screenshot", "screenshot.png", PNG_1x1, "image/png", 1),
        _artifact("fetch", "raw_response", "body.html",
                  stored["archives/1/s/fetch/body.html"].data, "text/html", 1),
        _artifact("readable", "article", "article.html", HOSTILE_ARTICLE.encode(), "text/html", 1),
        MetadataRecord(title=HOSTILE_TITLE, description="How to keep a starter <b>alive</b>",
                       author="u/baker", site_name="reddit"),
        TextRecord(text=HOSTILE_TEXT),
        _result(FETCH, "succeeded", output="body.html"),
        _result(META, "succeeded"),
    ]  # fmt: skip
    h.apply(*(event(one, i, r) for i, r in enumerate(records)), done(one, records=len(records)))
    two = jobs[2]
    h.apply(
        event(two, 0, _result(FETCH, "failed", "E_FETCH_HTTP_404", "HTTP 404 Not Found")),
        done(two, records=1),
    )
    four = jobs[4]
    h.advance(minutes=5)
    h.apply(
        event(four, 0, MetadataRecord(title="Brot backen")),
        event(four, 1, TextRecord(text="Sauerteig sourdough bread from bücher")),
        event(four, 2, _result(FETCH, "succeeded")),
        done(four, records=3),
    )
    return h
