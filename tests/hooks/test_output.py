"""Stdout is parsed line by line as it arrives; garbage is ignored; floods are capped."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from shared.hooks.records import HookRecord
from shared.hooks.snapshot_runner import HookSpec, SnapshotSpec, run_snapshot
from shared.hooks.spawn import OUTPUT_CAP
from tests.hooks.support import FIXTURES, LANGS, Recorder, base_env, capture


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.mark.parametrize("lang", LANGS)
async def test_flood_of_garbage_is_capped_without_deadlock(
    tmp_path: Path, lang: tuple[str, bool], caplog: pytest.LogCaptureFixture
) -> None:
    suffix, host = lang
    caplog.set_level(logging.WARNING)
    baseline, peak = rss_bytes(), 0
    done = asyncio.Event()

    async def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, rss_bytes())
            await asyncio.sleep(0.01)

    sampler = asyncio.create_task(sample())
    try:
        # a deadlock would hold the hook until its timeout (killed: failed); the timeout is a
        # bound, not a timing: the flood takes ~2 s idle and past 10 s at load 20
        env = base_env(TIMEOUT="120")
        outcome, rec = await capture(tmp_path, [f"flood_{suffix}"], env=env, python_host=host)
    finally:
        done.set()
        await sampler
    result = outcome.result(f"flood_{suffix}").result
    # exit 0, but the final ArchiveResult came after the cap: nothing claimed, so succeeded
    assert result.status == "succeeded" and result.output_str == ""
    assert rec.tags(f"flood_{suffix}") == ["before-flood"]  # the record past the cap is lost
    log = next((tmp_path / "out" / f"flood_{suffix}").glob("*.stderr.log"))
    assert OUTPUT_CAP <= log.stat().st_size < OUTPUT_CAP + 1000
    assert log.read_bytes().endswith(b"bytes discarded\n")
    assert "discarded" in caplog.text and "ignored stdout line" in caplog.text
    assert peak - baseline < 64 * 1024 * 1024, f"runner grew by {(peak - baseline) >> 20} MiB"


class Stamper(Recorder):
    """Notes when each record arrived, to compare with when the hook printed it."""


async def test_records_arrive_while_the_hook_still_runs(tmp_path: Path) -> None:
    plugin = tmp_path / "plugins" / "drip"
    plugin.mkdir(parents=True)
    hook = plugin / "on_Snapshot__10_drip.sh"
    hook.write_text(
        "#!/bin/sh\n"
        'echo \'{"type": "Tag", "name": "one"}\'\n'
        "sleep 0.5\n"
        'echo \'{"type": "Tag", "name": "two"}\'\n'
        "sleep 0.5\n"
    )
    hook.chmod(0o755)
    rec = Recorder()
    spec = SnapshotSpec("s", "u", tmp_path / "out", [tmp_path / "plugins"], base_env())
    await run_snapshot(spec, rec)
    times = {r.name: t for _, r, t in rec.records if r.type == "Tag"}
    _, _, finished = rec.finished["drip/on_Snapshot__10_drip.sh"]
    assert times["two"] - times["one"] > 0.4  # streamed, not collected at exit
    assert finished - times["two"] > 0.4


async def test_invalid_records_are_logged_not_fatal(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    plugin = tmp_path / "plugins" / "junk"
    plugin.mkdir(parents=True)
    (plugin / "on_Snapshot__10_junk.py").write_text(
        "print('hello')\n"
        'print(\'{"type": "Tag"}\')\n'  # missing name
        'print(\'{"type": "Tag", "name": ""}\')\n'  # too short
        'print(\'{"type": "Unknown"}\')\n'
        'print(\'{"type": "Tag", "name": "good"}\', end=\'\')\n'  # no final newline
    )
    caplog.set_level(logging.WARNING)
    rec = Recorder()
    spec = SnapshotSpec("s", "u", tmp_path / "out", [tmp_path / "plugins"], base_env())
    outcome = await run_snapshot(spec, rec)
    assert outcome.hooks[0].result.status == "succeeded"
    assert rec.tags("junk") == ["good"]
    assert caplog.text.count("ignored stdout line") == 3  # the first 3 are logged ...
    assert "4 stdout lines were not records" in caplog.text  # ... then counted


class SlowObserver(Recorder):
    async def record(self, hook: HookSpec, record: HookRecord) -> None:
        await super().record(hook, record)
        await asyncio.sleep(0.001)


async def test_slow_observer_applies_backpressure_not_deadlock(tmp_path: Path) -> None:
    plugin = tmp_path / "plugins" / "many"
    plugin.mkdir(parents=True)
    (plugin / "on_Snapshot__10_many.py").write_text(
        "from shared.hooks.records import dump_record, TagRecord\n"
        "import sys\n"
        "for i in range(2000):\n"
        "    sys.stdout.write(dump_record(TagRecord(name=f't{i}' + 'x' * 100)) + '\\n')\n"
    )
    rec = SlowObserver()
    spec = SnapshotSpec(
        "s",
        "u",
        tmp_path / "out",
        [FIXTURES, tmp_path / "plugins"],
        base_env(),
        only_hooks=["many"],
    )
    await run_snapshot(spec, rec)
    assert len(rec.tags("many")) == 2000
