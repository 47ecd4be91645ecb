"""`weed mini` on ports of its own choosing starts even when one of them is taken between
being picked and being bound (another process, or another test worker, got there first)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from services.supervisor import infra
from services.supervisor.children import free_ports

pytestmark = pytest.mark.integration


def test_a_port_taken_after_it_was_picked_costs_a_retry_not_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    picks: list[list[int]] = []

    def pick(count: int) -> list[int]:
        ports = free_ports(count)
        if not picks:  # the first pick's metrics port is already someone else's
            ports[-1] = taken.getsockname()[1]
        picks.append(ports)
        return ports

    monkeypatch.setattr(infra, "free_ports", pick)
    creds = infra.S3Credentials("testkey", "test-secret-value-0123456789")
    try:
        weed = infra.start_weed(tmp_path / "s3", "b", creds, tmp_path / "weed.log")
    finally:
        taken.close()
    try:
        assert len(picks) == 2
        assert weed.ports == picks[1] and weed.child.alive()
    finally:
        weed.child.stop(3)
