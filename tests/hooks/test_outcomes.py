"""Exit status + printed ArchiveResult -> final state, exactly as the seed's failure modes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.hooks.support import FIXTURES, LANGS, capture, sh_hook


def near(when: datetime | None, delay: timedelta) -> bool:
    assert when is not None
    return abs(when - (datetime.now(UTC) + delay)) < timedelta(seconds=30)


@pytest.mark.parametrize("lang", LANGS)
async def test_success_streams_records_and_keeps_files(
    tmp_path: Path, lang: tuple[str, bool]
) -> None:
    suffix, host = lang
    outcome, rec = await capture(tmp_path, [f"ok_{suffix}"], python_host=host, started_after=0)
    [hook] = outcome.hooks
    assert hook.result.status == "succeeded" and not hook.retry and not hook.hard_failure
    assert hook.result.output_str == "ok.txt" and hook.result.exit_code == 0
    assert hook.result.plugin == f"ok_{suffix}" and hook.result.hook == hook.hook.name
    assert hook.result.started_at and hook.result.ended_at and hook.result.attempt == 1
    # queued before anything ran, then started; its own ArchiveResult (the claim "ok.txt")
    # is not streamed: the final result carries it
    assert rec.statuses(f"ok_{suffix}") == ["queued", "started"]
    assert rec.tags(f"ok_{suffix}") == [f"from-{suffix}"]
    out = tmp_path / "out" / f"ok_{suffix}"
    assert hook.output_dir == out and (out / "ok.txt").exists()
    log = (out / f"{hook.hook.name}.stderr.log").read_text()
    assert "working on --url=https://example.org/a?b=c" in log
    assert rec.finished[hook.hook.key][0] == hook.result


@pytest.mark.parametrize("lang", LANGS)
async def test_soft_failure_is_recorded_not_retried(tmp_path: Path, lang: tuple[str, bool]) -> None:
    suffix, host = lang
    outcome, _ = await capture(tmp_path, [f"soft_{suffix}"], python_host=host)
    [hook] = outcome.hooks
    assert hook.result.status == "failed" and hook.result.exit_code == 0
    assert hook.result.output_str == "404 Not Found"
    assert hook.result.error_code == f"E_SOFT_{suffix.upper()}_404"
    assert hook.result.retry_at is None and not hook.retry and not hook.hard_failure


@pytest.mark.parametrize("lang", LANGS)
async def test_exit_zero_without_result_is_success(tmp_path: Path, lang: tuple[str, bool]) -> None:
    suffix, host = lang
    outcome, _ = await capture(tmp_path, [f"silent_{suffix}", f"skip_{suffix}"], python_host=host)
    silent, skip = (outcome.result(f"{p}_{suffix}") for p in ("silent", "skip"))
    assert silent.result.status == "succeeded" and silent.result.retry_at is None
    assert skip.result.status == "skipped" and skip.result.output_str == "not applicable"
    assert not skip.retry
    # an empty stderr log is not kept
    assert not list((tmp_path / "out" / f"skip_{suffix}").glob("*.log"))


@pytest.mark.parametrize("lang", LANGS)
async def test_crash_after_partial_output_is_hard_failure_and_later_hooks_run(
    tmp_path: Path, lang: tuple[str, bool]
) -> None:
    suffix, host = lang
    outcome, rec = await capture(tmp_path, [f"crash_{suffix}", f"after_{suffix}"], python_host=host)
    crash = outcome.result(f"crash_{suffix}").result
    assert crash.status == "failed" and crash.exit_code in (1, 2)
    assert crash.error_code == f"E_CRASH_{suffix.upper()}_FAILED"
    assert crash.output_str == "half done"  # what the hook said before dying is kept
    assert near(crash.retry_at, timedelta(minutes=5))
    assert outcome.result(f"crash_{suffix}").retry
    assert rec.tags(f"crash_{suffix}") == [f"partial-{suffix}"]
    log = (tmp_path / "out" / f"crash_{suffix}").glob("*.stderr.log")
    assert "upstream said 500" in next(log).read_text()
    assert outcome.result(f"after_{suffix}").result.status == "succeeded"


@pytest.mark.parametrize(
    ("attempt", "delay"), [(2, timedelta(minutes=30)), (4, timedelta(hours=12))]
)
async def test_retry_backoff_follows_the_attempt(
    tmp_path: Path, attempt: int, delay: timedelta
) -> None:
    outcome, _ = await capture(tmp_path, ["crash_sh"], attempt=attempt)
    result = outcome.result("crash_sh").result
    assert result.attempt == attempt and near(result.retry_at, delay)


async def test_hard_failure_gives_up_after_the_last_attempt(tmp_path: Path) -> None:
    outcome, _ = await capture(tmp_path, ["crash_sh"], attempt=5)
    hook = outcome.result("crash_sh")
    assert hook.result.status == "failed" and hook.hard_failure
    assert hook.result.retry_at is None and not hook.retry and outcome.to_retry == []


async def test_max_attempts_above_five_keeps_retrying_at_the_last_step(tmp_path: Path) -> None:
    outcome, _ = await capture(tmp_path, ["crash_sh"], attempt=6, max_attempts=8)
    hook = outcome.result("crash_sh")
    assert near(hook.result.retry_at, timedelta(hours=12)) and hook.retry
    outcome, _ = await capture(tmp_path / "last", ["crash_sh"], attempt=8, max_attempts=8)
    assert outcome.result("crash_sh").result.retry_at is None and outcome.to_retry == []


async def test_hook_that_cannot_start_is_hard_failure(tmp_path: Path) -> None:
    plugin = tmp_path / "plugins" / "noexec"
    plugin.mkdir(parents=True)
    (plugin / "on_Snapshot__10_noexec.sh").write_text("#!/bin/sh\necho hi\n")  # no exec bit
    outcome, _ = await capture(
        tmp_path, ["noexec", "after_sh"], plugins_dirs=[FIXTURES, tmp_path / "plugins"]
    )
    hook = outcome.result("noexec")
    assert hook.result.status == "failed" and hook.result.error_code == "E_NOEXEC_SPAWN"
    assert "Permission denied" in hook.result.output_str and hook.retry
    assert outcome.result("after_sh").result.status == "succeeded"


async def test_a_hook_ending_before_started_after_is_not_reported_started(
    tmp_path: Path,
) -> None:
    outcome, rec = await capture(tmp_path, ["ok_sh"], started_after=60)
    [hook] = outcome.hooks
    assert rec.statuses("ok_sh") == ["queued"]  # its start is in the final result alone
    assert hook.result.status == "succeeded" and hook.result.started_at is not None
    assert rec.tags("ok_sh") == ["from-sh"]  # its other records are streamed as ever


async def test_a_long_hook_is_reported_started_while_it_runs(tmp_path: Path) -> None:
    sh_hook(tmp_path / "plugins", "slow", "on_Snapshot__10_slow.sh", "sleep 5")
    outcome, rec = await capture(tmp_path, ["slow"], plugins_dirs=[tmp_path / "plugins"])
    [hook] = outcome.hooks
    assert hook.result.status == "succeeded"
    [started_at] = [t for key, r, t in rec.records if getattr(r, "status", "") == "started"]
    assert started_at < rec.finished[hook.hook.key][2]  # reported before the hook ended
    assert rec.statuses("slow") == ["queued", "started"]
