"""The htmlmeta hook as a real subprocess on saved pages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from shared.hooks.records import (
    ArchiveResultRecord,
    HookRecord,
    MetadataRecord,
    TextRecord,
    parse_record,
)

HOOK = Path(__file__).resolve().parents[1] / "on_Snapshot__81_htmlmeta.py"
CORPORA = Path(__file__).resolve().parents[3] / ".." / "shared" / "corpora"

PAGE = b"""<!doctype html><html lang="en"><head><title> Fallback  title </title>
<meta property="og:title" content="The OG title"><meta name="description" content="Desc.">
<meta property="article:published_time" content="2026-01-02T03:04:05Z">
<meta property="og:site_name" content="Site"><style>.x{}</style><script>var s=1;</script>
</head><body><h1>Head</h1><p>First   para.</p><noscript>no</noscript><p>Second</p></body></html>"""


def run(tmp_path: Path, body: bytes | None) -> list[HookRecord]:
    (tmp_path / "fetch").mkdir(parents=True)
    (tmp_path / "htmlmeta").mkdir()
    if body is not None:
        (tmp_path / "fetch" / "body.html").write_bytes(body)
    proc = subprocess.run([sys.executable, str(HOOK), "--url=http://x/"], cwd=tmp_path / "htmlmeta",
                          capture_output=True, timeout=30, check=True)  # fmt: skip
    return [parse_record(line) for line in proc.stdout.splitlines() if line.strip()]


def test_metadata_and_text(tmp_path: Path) -> None:
    records = run(tmp_path, PAGE)
    meta = next(r for r in records if isinstance(r, MetadataRecord))
    assert meta.title == "The OG title" and meta.description == "Desc."
    assert meta.published_at == "2026-01-02T03:04:05Z" and meta.site_name == "Site"
    assert meta.language == "en"
    text = next(r for r in records if isinstance(r, TextRecord)).text
    assert text == "Head\nFirst para.\nSecond"
    assert records[-1] == ArchiveResultRecord(status="succeeded", output_str="The OG title")
    saved = json.loads((tmp_path / "htmlmeta" / "metadata.json").read_text())
    assert saved["title"] == "The OG title"


def test_title_tag_is_the_fallback(tmp_path: Path) -> None:
    records = run(tmp_path, b"<html><head><title>Only  this</title></head><body>x</body></html>")
    assert next(r for r in records if isinstance(r, MetadataRecord)).title == "Only this"


def test_nothing_fetched_is_skipped(tmp_path: Path) -> None:
    (result,) = run(tmp_path, None)
    assert isinstance(result, ArchiveResultRecord) and result.status == "skipped"


def test_garbage_does_not_crash(tmp_path: Path) -> None:
    records = run(tmp_path, b"\x00\xff<<<meta content=>>" * 1000)
    assert isinstance(records[-1], ArchiveResultRecord) and records[-1].status == "succeeded"


def test_metascraper_titles(tmp_path: Path) -> None:
    """On real saved pages, the title matches what metascraper extracts in most cases."""
    root = CORPORA / "metadata" / "metascraper"
    if not root.is_dir():
        pytest.skip("../shared/corpora not present")
    cases = sorted(p for p in root.iterdir() if (p / "input.html").exists())
    hits = 0
    for i, case in enumerate(cases):
        expected = json.loads((case / "expected.json").read_text())["expected"].get("title")
        out = run(tmp_path / str(i), (case / "input.html").read_bytes()) if expected else []
        got = next((r.title for r in out if isinstance(r, MetadataRecord)), None)
        hits += bool(expected and got and " ".join(expected.split()) in " ".join(got.split()))
    assert hits >= 0.7 * len(cases), f"titles right on {hits}/{len(cases)}"
