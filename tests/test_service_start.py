"""A service told to stop while it still waits for NATS at start stops at once
(shared.lifecycle.unless_stopped): it used to ignore SIGTERM until NATS answered, so a stop
waited for the supervisor's, systemd's or Docker's kill."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.cli.test_health_states import closed_port


def test_a_service_waiting_for_nats_stops_on_sigterm(tmp_path: Path) -> None:
    env = {**os.environ, "DATA_DIR": str(tmp_path),
           "NATS_URL": f"nats://127.0.0.1:{closed_port()}"}  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.poller"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        seen = ""
        assert proc.stdout is not None
        while "Connect call failed" not in seen and time.monotonic() < deadline:
            seen += proc.stdout.readline()  # it is retrying NATS
        asked = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=60)  # it waited for NATS for good before
        assert proc.returncode == 0
        assert time.monotonic() - asked < 30  # room for CI at load 6-10; it took ~0.5 s here
        assert "poller stopped before NATS answered" in rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
