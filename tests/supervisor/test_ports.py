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
    monkeypatch.delenv(children.PORT_RANGE_ENV, raising=False)
    monkeypatch.setattr(children, "PORTS_FROM", processes.ephemeral_ports().start)
    ports = free_ports(3)
    assert len(set(ports)) == 3 and all(p in processes.ephemeral_ports() for p in ports)


def test_a_process_given_a_range_picks_only_from_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """DLA_PORT_RANGE keeps processes that pick ports at once apart (each test worker has one);
    a value that is no range is ignored."""
    monkeypatch.setattr(children, "_next_port", None)
    monkeypatch.setenv(children.PORT_RANGE_ENV, "20000-20049")
    ports = free_ports(30)
    assert len(set(ports)) == 30 and all(20000 <= p <= 20049 for p in ports)
    for junk in ("", "x-y", "20049-20000", "80-90", "20000-70000"):
        monkeypatch.setenv(children.PORT_RANGE_ENV, junk)
        assert children.port_range() == (children.PORTS_FROM, processes.ephemeral_ports().start)
