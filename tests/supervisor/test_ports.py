"""Ports for the stack's servers: free, distinct, and outside the kernel's ephemeral range,
where an outgoing connection could take one before its server binds it."""

from __future__ import annotations

import socket

import pytest

from services.supervisor import children
from services.supervisor.children import free_ports
from shared import processes


def test_ports_are_free_distinct_and_below_the_ephemeral_range() -> None:
    ephemeral = processes.ephemeral_ports()
    assert ephemeral.start > 1024 and ephemeral.stop > ephemeral.start
    ports = free_ports(20)
    assert len(set(ports)) == 20
    assert all(children.PORTS_FROM <= p < ephemeral.start for p in ports)
    for p in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", p))  # free indeed


def test_the_kernels_choice_when_nothing_is_free_below(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(children, "PORTS_FROM", processes.ephemeral_ports().start)
    ports = free_ports(3)
    assert len(set(ports)) == 3 and all(p in processes.ephemeral_ports() for p in ports)
