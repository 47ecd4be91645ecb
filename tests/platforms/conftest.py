"""One platform stand-in server per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from testkit.platform_server import PlatformServer


@pytest.fixture(scope="module")
def server() -> Iterator[PlatformServer]:
    """Every platform's API and pages on 127.0.0.1."""
    with PlatformServer() as s:
        yield s
