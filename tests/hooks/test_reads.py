"""A hook that reads another's output never describes a failed attempt: it is skipped when
its source failed, and a retry of the source re-runs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.hooks.discovery import discover_hooks
from shared.hooks.reads import plugin_reads, with_related
from shared.platforms import registry
from tests.hooks.support import FIXTURES, base_env, capture


@pytest.mark.parametrize("outcome", ["soft", "hard"])
async def test_reader_is_skipped_when_its_source_failed(tmp_path: Path, outcome: str) -> None:
    snap, rec = await capture(
        tmp_path, ["src_py", "reader_py"], env=base_env(SRC_PY_OUTCOME=outcome)
    )
    reader = snap.result("reader_py").result
    assert reader.status == "skipped" and reader.error_code == "E_READER_PY_DEPENDENCY"
    assert "src_py failed" in reader.output_str
    assert not [r for r in rec.of("reader_py") if r.type == "Metadata"]
    assert reader.retry_at is None, "it re-runs with its source, not on its own"


async def test_reader_runs_when_its_source_succeeded(tmp_path: Path) -> None:
    snap, rec = await capture(tmp_path, ["src_py", "reader_py"], env=base_env())
    assert snap.result("reader_py").result.status == "succeeded"
    assert [r.title for r in rec.of("reader_py") if r.type == "Metadata"] == ["the page"]


def test_a_retry_brings_readers_and_their_sources() -> None:
    hooks = discover_hooks([FIXTURES], "Snapshot")
    reads = plugin_reads([FIXTURES])
    assert reads["reader_py"] == ("src_py",)
    src = next(h.key for h in hooks if h.plugin == "src_py")
    reader = next(h.key for h in hooks if h.plugin == "reader_py")
    assert [h.key for h in with_related(hooks, {src}, reads)] == [src, reader]
    assert [h.key for h in with_related(hooks, {reader}, reads)] == [src, reader]
    ok = next(h.key for h in hooks if h.plugin == "ok_py")
    assert [h.key for h in with_related(hooks, {ok}, reads)] == [ok]


def test_x_platform_in_reads_is_every_platform_plugin() -> None:
    """metadata reads the platforms' kept values: every platform of the registry, the one
    added last (mastodon) included, without a list of them in its config.json."""
    reads = plugin_reads([Path(__file__).parents[2] / "plugins"])
    assert set(reads["metadata"]) == {"fetch", "dom", *registry.SITES}
    assert "mastodon" in reads["metadata"] and "x-platform" not in reads["metadata"]
