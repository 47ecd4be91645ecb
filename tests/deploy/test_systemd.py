"""systemd units for every service, NATS and the S3 store: valid (systemd-analyze) and hardened."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
UNITS = REPO / "deploy" / "systemd"
HARDENING = ("NoNewPrivileges=true", "ProtectSystem=strict", "User=dla", "PrivateTmp=true")


def test_every_unit_is_hardened() -> None:
    units = sorted(UNITS.glob("*.service"))
    assert {u.name for u in units} >= {"dla@.service", "dla-nats.service", "dla-s3.service"}
    for unit in units:
        text = unit.read_text()
        for line in HARDENING:
            assert line in text, f"{unit.name} lacks {line}"


def test_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze not available")
    bin_dir = Path(sys.executable).parent  # nats-server and weed live in the venv, as in /opt/dla
    if not (bin_dir / "nats-server").exists() or not (bin_dir / "weed").exists():
        pytest.skip("venv without nats-server/weed")
    names = []
    for unit in UNITS.glob("*.service"):
        text = unit.read_text().replace("/opt/dla/.venv/bin", str(bin_dir))
        name = unit.name.replace("@.", "@writer.")  # verify the template as one instance
        (tmp_path / name).write_text(text)
        names.append(f"./{name}")
    proc = subprocess.run(
        [analyze, "verify", "--man=no", *names],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    problems = [
        line for line in proc.stderr.splitlines()
        if "Unknown key" in line or "Unknown section" in line or "not executable" in line
        or "Failed to parse" in line or "Invalid" in line
    ]  # fmt: skip
    assert proc.returncode == 0 and not problems, proc.stderr


def test_install_script_is_valid_shell() -> None:
    for script in ("install.sh", "install-system-deps.sh"):
        proc = subprocess.run(["sh", "-n", str(REPO / "deploy" / script)], capture_output=True)
        assert proc.returncode == 0, proc.stderr
