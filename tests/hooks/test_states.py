"""The one state-machine pattern; the retry schedule lives in one place."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from shared.hooks.retry import BACKOFF, MAX_ATTEMPTS, next_retry_at, retry_delay
from shared.hooks.states import (
    ArchiveResultMachine,
    BinaryMachine,
    IllegalTransition,
    SnapshotMachine,
)


def test_snapshot_machine() -> None:
    m = SnapshotMachine()
    with pytest.raises(IllegalTransition):
        m.to("sealed")  # cannot seal what never started
    m.to("started")
    m.to("sealed")
    assert m.finished
    with pytest.raises(IllegalTransition):
        m.to("started")


@pytest.mark.parametrize("end", ["succeeded", "failed", "skipped"])
def test_archive_result_machine(end: str) -> None:
    m = ArchiveResultMachine()
    m.to("started")
    m.to(end)  # type: ignore[arg-type]
    assert m.finished
    with pytest.raises(IllegalTransition):
        m.to("started")
    assert m.can("queued") == (end != "succeeded")  # failed/skipped may be re-queued


def test_archive_result_illegal_moves() -> None:
    m = ArchiveResultMachine()
    for bad in ("succeeded", "failed", "queued"):
        with pytest.raises(IllegalTransition):
            m.to(bad)  # type: ignore[arg-type]
    m.to("skipped")  # a missing binary: skipped without starting
    with pytest.raises(IllegalTransition):
        ArchiveResultMachine("bogus")  # type: ignore[arg-type]


def test_binary_machine() -> None:
    m = BinaryMachine()
    m.to("started")
    m.to("failed")
    m.to("queued")  # look again later
    with pytest.raises(IllegalTransition):
        m.to("succeeded")


def test_backoff_schedule() -> None:
    assert (
        timedelta(minutes=5),
        timedelta(minutes=30),
        timedelta(hours=2),
        timedelta(hours=12),
    ) == BACKOFF
    assert MAX_ATTEMPTS == 5
    now = datetime(2025, 1, 1, tzinfo=UTC)
    assert [next_retry_at(a, now) for a in range(1, 6)] == [now + d for d in BACKOFF] + [None]
    # MAX_ATTEMPTS above 5: later retries wait the last step, until the last attempt.
    assert retry_delay(99) == BACKOFF[-1]
    assert [next_retry_at(a, now, max_attempts=8) for a in range(5, 9)] == [
        now + BACKOFF[-1]
    ] * 3 + [None]
    with pytest.raises(ValueError):
        retry_delay(0)
