"""Alert rules pass `promtool check rules` and their unit tests (`promtool test rules`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

PROM = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"


def promtool() -> str:
    tool = shutil.which("promtool")
    if tool is None:
        pytest.skip("promtool not installed (Debian package prometheus)")
    return tool


def test_alert_rules_are_valid() -> None:
    proc = subprocess.run(
        [promtool(), "check", "rules", "alerts.yml"],
        cwd=PROM, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_alerts_fire_when_they_should() -> None:
    proc = subprocess.run(
        [promtool(), "test", "rules", "alerts.test.yml"],
        cwd=PROM, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_prometheus_config_is_valid() -> None:
    proc = subprocess.run(
        [promtool(), "check", "config", "--syntax-only", "prometheus.yml"],
        cwd=PROM, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
