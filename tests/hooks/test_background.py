"""`.bg` hooks: own timeline, own timeout, many at once; the snapshot seals after the last."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from shared.hooks.records import HookRecord
from shared.hooks.snapshot_runner import HookSpec, SnapshotRun, SnapshotSpec
from shared.hooks.states import IllegalTransition
from tests.hooks.support import FIXTURES, Recorder, base_env, capture, sh_hook

SH_BG = """#!/bin/sh
sleep 0.5
echo '{"type": "ArchiveResult", "status": "succeeded", "output_str": "'$(basename "$0")'"}'
"""
PY_BG = """import os, sys, time
from shared.hooks.records import emit
time.sleep(0.5)
emit({"type": "ArchiveResult", "status": "succeeded", "output_str": os.path.basename(sys.argv[0])})
"""


def many_bg_hooks(root: Path, n: int) -> Path:
    for i in range(n):
        plugin = root / f"bg{i:02d}"
        plugin.mkdir(parents=True)
        if i % 2:
            (plugin / f"on_Snapshot__6{i % 10}_bg{i:02d}.bg.py").write_text(PY_BG)
        else:
            hook = plugin / f"on_Snapshot__6{i % 10}_bg{i:02d}.bg.sh"
            hook.write_text(SH_BG)
            hook.chmod(0o755)
    return root


@pytest.mark.parametrize("python_host", [True, False], ids=["host", "exec"])
async def test_fifty_concurrent_background_hooks(tmp_path: Path, python_host: bool) -> None:
    plugins = many_bg_hooks(tmp_path / "plugins", 50)
    outcome, _ = await capture(tmp_path, None, plugins_dirs=[plugins], python_host=python_host)
    assert len(outcome.hooks) == 50
    assert all(h.result.status == "succeeded" for h in outcome.hooks)
    assert {h.result.output_str for h in outcome.hooks} == {h.hook.name for h in outcome.hooks}
    # concurrent, however loaded the machine: at some instant many of them ran at once
    # (one after another, no two would overlap)
    spans = [(h.result.started_at, h.result.ended_at) for h in outcome.hooks]
    bounds = [(start, end) for start, end in spans if start is not None and end is not None]
    assert len(bounds) == 50
    overlap = max(sum(1 for s, e in bounds if s <= t < e) for t, _ in bounds)
    assert overlap >= 5, f"at most {overlap} background hooks ran at once"


async def test_background_hook_past_its_own_timeout_is_stopped(tmp_path: Path) -> None:
    sh_hook(tmp_path / "plugins", "lazy", "on_Snapshot__20_lazy.bg.sh", "sleep 30")
    began = time.monotonic()
    outcome, _ = await capture(
        tmp_path,
        ["lazy", "after_sh"],
        plugins_dirs=[FIXTURES, tmp_path / "plugins"],
        env=base_env(LAZY_TIMEOUT="0.5"),
    )
    assert outcome.result("lazy").result.error_code == "E_LAZY_TIMEOUT"
    assert outcome.result("after_sh").result.status == "succeeded"
    assert time.monotonic() - began < 20  # never waited out the hook's 30 s sleep


class SealProbe(Recorder):
    """At step 9, checks that the snapshot refuses to seal while the .bg hook runs."""

    run: SnapshotRun
    checked = False

    async def record(self, hook: HookSpec, record: HookRecord) -> None:
        await super().record(hook, record)
        if (
            hook.plugin == "after_sh"
            and record.type == "ArchiveResult"
            and record.status == "started"
        ):
            assert self.run.has_running_background_hooks()
            with pytest.raises(IllegalTransition):
                self.run.seal()
            self.checked = True


async def test_snapshot_cannot_seal_while_background_hook_runs(tmp_path: Path) -> None:
    probe = SealProbe()
    spec = SnapshotSpec(
        "s",
        "u",
        tmp_path / "out",
        [FIXTURES],
        base_env(),
        only_hooks=["ord_b", "after_sh"],
        started_after=0,
    )
    probe.run = SnapshotRun(spec, probe, kill_grace=0.5)
    outcome = await probe.run.run()
    assert probe.checked and outcome.status == "sealed"
    assert not probe.run.has_running_background_hooks()
    assert outcome.result("ord_b").result.status == "succeeded"


async def test_background_failure_does_not_stop_foreground_hooks(tmp_path: Path) -> None:
    sh_hook(tmp_path / "plugins", "bgcrash", "on_Snapshot__05_crash.bg.sh", "exit 7")
    outcome, _ = await capture(
        tmp_path, ["bgcrash", "ok_sh", "after_py"], plugins_dirs=[FIXTURES, tmp_path / "plugins"]
    )
    assert outcome.result("bgcrash").result.exit_code == 7 and outcome.result("bgcrash").retry
    assert outcome.result("ok_sh").result.status == "succeeded"
    assert outcome.result("after_py").result.status == "succeeded"
    await asyncio.sleep(0)
