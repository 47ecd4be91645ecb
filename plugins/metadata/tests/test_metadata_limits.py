"""A page whose parse would need gigabytes: the hook parses only its start; past the memory
limit, the runner records the hook as stopped by it (and nothing else is hurt)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from shared.hooks.limits import HookLimits
from shared.hooks.records import ArchiveResultRecord
from shared.hooks.snapshot_runner import SnapshotSpec, run_snapshot

PLUGINS = Path(__file__).resolve().parents[2]
HUGE = b"<!doctype html><title>Huge</title><body>" + b"<p>x</p>" * (8 * 1024 * 1024)
"""64 MiB of paragraphs: parsing it whole needs gigabytes of address space."""


class Results:
    """A HookObserver keeping the final results."""

    def __init__(self) -> None:
        self.final: list[ArchiveResultRecord] = []

    async def record(self, hook: object, record: object) -> None:
        pass

    async def hook_finished(self, hook: object, result: ArchiveResultRecord, d: Path) -> None:
        self.final.append(result)


async def run_metadata(tmp_path: Path, **env: str) -> ArchiveResultRecord:
    """The metadata hook through the runner, under a 512 MiB limit, on HUGE as fetch's body."""
    (tmp_path / "fetch").mkdir(parents=True)
    (tmp_path / "fetch" / "body.html").write_bytes(HUGE)
    seen = Results()
    spec = SnapshotSpec(
        snapshot_id="s", url="http://x/", out_dir=tmp_path, plugins_dirs=[PLUGINS],
        env={**os.environ, **env}, only_hooks=["metadata"], limits=HookLimits(512 * 1024**2, 0),
    )  # fmt: skip
    await run_snapshot(spec, seen, kill_grace=1)
    return seen.final[0]


async def test_a_page_whose_parse_needs_gigabytes_is_parsed_in_part(tmp_path: Path) -> None:
    result = await run_metadata(tmp_path)
    assert result.status == "succeeded" and result.output_str == "Huge"


async def test_a_page_of_more_tags_than_the_limit_is_parsed_up_to_it(tmp_path: Path) -> None:
    """Within the byte cap (5 MiB: 650 000 elements) the tag cap still stops the parse."""
    result = await run_metadata(tmp_path, METADATA_MAX_TAGS="1000")
    assert result.status == "succeeded" and result.output_str == "Huge"
    saved = json.loads((tmp_path / "metadata" / "metadata.json").read_text())
    assert saved["cut_sources"] == ["raw: 5242880 bytes", "raw: 1000 tags"]


async def test_a_parse_past_the_memory_limit_is_a_resource_limit(tmp_path: Path) -> None:
    everything = str(len(HUGE))
    result = await run_metadata(
        tmp_path, METADATA_MAX_HTML_BYTES=everything, METADATA_MAX_TAGS=everything
    )
    assert result.status == "failed" and result.error_code == "E_METADATA_RESOURCE_LIMIT", result
    assert result.retry_at is None
