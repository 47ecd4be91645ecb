"""Every hook process runs under a memory (RLIMIT_DATA) and CPU-time (RLIMIT_CPU) limit; a hook
stopped by one ends failed with E_<PLUGIN>_RESOURCE_LIMIT, not retried, and nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.hooks.limits import HookLimits
from tests.hooks.support import base_env, capture

MB = 1024 * 1024


@pytest.mark.parametrize(
    ("plugin", "host"),
    [("hog_py", True), ("hog_py", False), ("hog_sh", True)],
    ids=["py-host", "py-exec", "sh-child"],
)
async def test_memory_hog_is_stopped_and_recorded_as_resource_limit(
    tmp_path: Path, plugin: str, host: bool
) -> None:
    outcome, _ = await capture(
        tmp_path, [plugin, "ok_py"], env=base_env(), python_host=host,
        limits=HookLimits(512 * MB, 0),
    )  # fmt: skip
    hog = outcome.result(plugin).result
    assert hog.status == "failed"
    assert hog.error_code == f"E_{plugin.upper()}_RESOURCE_LIMIT", hog
    assert "memory" in hog.output_str and "512 MB" in hog.output_str
    assert hog.retry_at is None, "a hostile page exhausts memory again: not retried"
    assert outcome.result("ok_py").result.status == "succeeded", "nothing else is hurt"


async def test_cpu_spinner_is_stopped_by_the_cpu_limit(tmp_path: Path) -> None:
    outcome, _ = await capture(
        tmp_path, ["spin_py"], env=base_env(TIMEOUT="60"), limits=HookLimits(512 * MB, 1)
    )
    spin = outcome.result("spin_py").result
    assert spin.error_code == "E_SPIN_PY_RESOURCE_LIMIT" and "cpu" in spin.output_str
    assert spin.retry_at is None


async def test_a_plugin_may_set_its_own_memory_limit(tmp_path: Path) -> None:
    outcome, _ = await capture(
        tmp_path, ["hog_py"], env=base_env(HOG_PY_MEMORY_LIMIT_MB="1200", HOG_PY_MB="600"),
        limits=HookLimits(512 * MB, 0),
    )  # fmt: skip
    assert outcome.result("hog_py").result.status == "succeeded"
