"""Steps 0..9 in order, file-name order inside a step, fg blocks, .bg does not, unnumbered last."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from tests.hooks.support import capture

ORDER_PLUGINS = ["ord_z", "ord_a", "ord_b", "ord_d", "ord_node", "ord_c", "ord_e", "ord_f"]


def read_log(path: Path) -> dict[str, dict[str, float]]:
    times: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        name, event, at = line.split()
        times.setdefault(name, {})[event] = float(at)
    return times


async def test_steps_foreground_background_and_unnumbered(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    began = time.time()
    outcome, rec = await capture(tmp_path, ORDER_PLUGINS, started_after=0)
    returned = time.time()
    t = read_log(tmp_path / "out" / "order.log")
    early, first, long_bg = (
        t["on_Snapshot__03_early.sh"],
        t["on_Snapshot__05_first.sh"],
        t["on_Snapshot__06_long.bg.py"],
    )
    second, node = t["on_Snapshot__15_second.py"], t["on_Snapshot__17_node.js"]
    index, tail_bg, last = (
        t["on_Snapshot__91_index.sh"],
        t["on_Snapshot__95_tail.bg.sh"],
        t["on_Snapshot__last.py"],
    )

    # file-name order inside step 0 across plugins (ord_z's 03 before ord_a's 05), fg blocks
    assert early["end"] <= first["start"]
    # step 1 waits for step 0's foreground hooks ...
    assert first["end"] <= second["start"]
    # ... but not for the step-0 background hook, which keeps running through step 1
    assert first["end"] <= long_bg["start"] < second["end"] < long_bg["end"]
    started = [k.split("/")[1] for k, r, _ in rec.records if getattr(r, "status", "") == "started"]
    assert started.index("on_Snapshot__06_long.bg.py") < started.index("on_Snapshot__15_second.py")
    assert second["end"] <= node["start"]  # a Node hook is just another executable
    assert node["end"] <= index["start"]
    # the unnumbered hook runs after step 9 (and warns); a .bg hook outlives it all
    assert index["end"] <= last["start"] < last["end"] < tail_bg["end"]
    assert "unnumbered" in caplog.text
    # run_snapshot returned only after the last .bg hook ended, inside its own timeout
    assert tail_bg["end"] <= returned and returned - began < 5
    assert [h.hook.name for h in outcome.hooks] == [
        "on_Snapshot__03_early.sh",
        "on_Snapshot__05_first.sh",
        "on_Snapshot__06_long.bg.py",
        "on_Snapshot__15_second.py",
        "on_Snapshot__17_node.js",
        "on_Snapshot__91_index.sh",
        "on_Snapshot__95_tail.bg.sh",
        "on_Snapshot__last.py",
    ]
    assert all(h.result.status == "succeeded" for h in outcome.hooks)
    # every ArchiveResult was queued before the first hook started
    statuses = [r.status for _, r, _ in rec.records if r.type == "ArchiveResult"]
    assert statuses[: len(ORDER_PLUGINS)] == ["queued"] * len(ORDER_PLUGINS)
