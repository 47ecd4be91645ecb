"""A pytest plugin (loaded for every test, `-p testkit.real_components`): a test that uses a
fixture starting a real component (NATS, SeaweedFS, Chromium), directly or through another
fixture, is marked `integration`, so `make unit` (`-m "not integration"`) starts none."""

from __future__ import annotations

import pytest

REAL_COMPONENTS = frozenset({"nats_url", "module_nats_url", "s3_env", "browser"})
"""The fixtures that start a real component (tests/conftest.py, testkit/browser.py); every
fixture that starts more (a stack, a live writer) depends on one of them."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if REAL_COMPONENTS & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)
