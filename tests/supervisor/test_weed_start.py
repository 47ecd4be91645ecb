"""`weed mini` on ports of its own choosing starts even when one of them is taken between
being picked and being bound (another process, or another test worker, got there first)."""

from __future__ import annotations

import socket
import time
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
        # the second pick's ports (one may give way to the admin's gRPC: with_admin_pair)
        assert len(set(weed.ports) & set(picks[1])) >= infra.WEED_PORTS - 1
        assert weed.child.alive()
    finally:
        weed.child.stop(3)


def test_the_admin_and_its_maintenance_worker_meet(tmp_path: Path) -> None:
    """weed's maintenance worker dials the admin's HTTP port + 10000 for its gRPC: on ports
    of our choosing it found nothing there and logged so every 5 s for as long as it ran."""
    creds = infra.S3Credentials("testkey", "test-secret-value-0123456789")
    log = tmp_path / "weed.log"
    weed = infra.start_weed(tmp_path / "s3", "b", creds, log)
    try:
        admin, grpc = weed.ports[infra.WEED_ADMIN : infra.WEED_ADMIN + 2]
        assert grpc == admin + infra.WEED_GRPC_OFFSET
        time.sleep(6)  # past the worker's first retry
        text = log.read_text(errors="replace")
        assert "Admin        ready" in text
        assert "worker stream" not in text and "admin server failed" not in text, text[-2000:]
    finally:
        weed.child.stop(3)


def test_with_admin_pair_keeps_every_port_distinct() -> None:
    ports = free_ports(infra.WEED_PORTS)
    paired = infra.with_admin_pair(ports)
    assert len(set(paired)) == infra.WEED_PORTS
    admin = paired[infra.WEED_ADMIN]
    assert paired[infra.WEED_ADMIN + 1] in (admin + infra.WEED_GRPC_OFFSET, ports[9])
