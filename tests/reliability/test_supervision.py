"""`dla up` supervises the engines like the services; restart backoff resets when healthy."""

from __future__ import annotations

import logging
import os
import signal
import socket
import time
from pathlib import Path

import pytest

from services.supervisor.restarts import HEALTHY_RESET_S, Restarts, exit_reason
from services.supervisor.stack import Stack
from testkit.stack_env import ENGINES_GRACE_S, own_engines_env


def test_backoff_grows_then_resets_after_a_healthy_stretch() -> None:
    r = Restarts("svc")
    now = 1000.0
    delays = []
    for _ in range(8):
        assert not r.exited(-9, now)  # first look: schedules the restart
        delays.append(r.next_at - now)
        now = r.next_at
        assert r.exited(-9, now)
    assert delays == [1, 2, 4, 8, 16, 32, 60, 60]
    r.running(now + HEALTHY_RESET_S / 2)
    assert r.count == 8, "a short run does not reset"
    r.running(now + HEALTHY_RESET_S)
    assert r.count == 0 and r.total == 8
    now += HEALTHY_RESET_S + 1
    assert not r.exited(1, now)
    assert r.next_at - now == 1


def test_exit_reasons_are_words() -> None:
    assert exit_reason(-9) == "killed by SIGKILL"
    assert exit_reason(3) == "exited with code 3"


def port_open(url: str) -> bool:
    host, port = url.rsplit("/", 1)[-1].rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=1).close()
        return True
    except OSError:
        return False


@pytest.mark.integration
def test_killed_engines_are_restarted_on_their_ports(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    env = own_engines_env()
    stack = Stack(data_dir=tmp_path / "data", env=env, services=())
    caplog.set_level(logging.INFO)
    try:
        stack.start_engines()
        assert stack.nats is not None and stack.weed is not None
        nats_url, s3_url = stack.nats.url, stack.weed.endpoint
        old = (stack.nats.child.pid, stack.weed.child.pid)
        os.kill(stack.nats.child.pid, signal.SIGKILL)
        os.kill(stack.weed.child.pid, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            stack.supervise_once()
            pids = (stack.nats.child.pid, stack.weed.child.pid)
            if stack.nats.child.alive() and stack.weed.child.alive() and pids != old:
                break
            time.sleep(0.2)
        assert (stack.nats.child.pid, stack.weed.child.pid) != old
        assert stack.nats.url == nats_url and stack.weed.endpoint == s3_url
        deadline = time.monotonic() + 30
        while not (port_open(nats_url) and port_open(s3_url)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert port_open(nats_url) and port_open(s3_url)
        assert "nats killed by SIGKILL" in caplog.text and "s3 killed by SIGKILL" in caplog.text
    finally:
        stack.stop(engines_grace_s=ENGINES_GRACE_S)
