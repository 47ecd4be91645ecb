"""Fixtures of the writer's unit tests: a fresh migrated database in a temporary folder."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from testkit.live_writer import LiveWriter


@pytest.fixture
def live_writer() -> Iterator[Callable[..., LiveWriter]]:
    """Makes LiveWriters; every one of them is stopped at teardown, even when a test fails."""
    made: list[LiveWriter] = []

    def make(data_dir: Path, nats_url: str, env: dict[str, str] | None = None) -> LiveWriter:
        writer = LiveWriter(data_dir, nats_url, dict(env or {}))
        made.append(writer)
        return writer

    yield make
    for writer in made:
        writer.close()
