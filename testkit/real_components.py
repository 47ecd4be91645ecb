"""A pytest plugin (loaded for every test, `-p testkit.real_components`): a test that uses a
fixture starting a real component (NATS, SeaweedFS, Chromium), directly or through another
fixture, is marked `integration`, so `make unit` (`-m "not integration"`) starts none."""

from __future__ import annotations

import os

import pytest

from services.supervisor.children import PORT_RANGE_ENV, port_range

REAL_COMPONENTS = frozenset({"nats_url", "module_nats_url", "s3_env", "browser"})
"""The fixtures that start a real component (tests/conftest.py, testkit/browser.py); every
fixture that starts more (a stack, a live writer) depends on one of them."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if REAL_COMPONENTS & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)


def pytest_configure(config: pytest.Config) -> None:
    """Each pytest-xdist worker, and every process it starts (stacks, `dla up`), picks server
    ports from a range of its own (`DLA_PORT_RANGE`): a port one worker's stack chose is not
    bound until its server starts, and another worker's stack once took it meanwhile."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
    if not worker.startswith("gw") or count < 2 or PORT_RANGE_ENV in os.environ:
        return
    index = int(worker[2:])
    low, high = port_range()
    size = (high - low) // count
    os.environ[PORT_RANGE_ENV] = f"{low + index * size}-{low + (index + 1) * size - 1}"
