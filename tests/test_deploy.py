"""Deployment files stay valid: docker-compose.yml passes Compose v2's own validation."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def compose_binary() -> Path:
    compose = pytest.importorskip("compose")
    # the package's console wrapper always exits 0: call the ELF inside it
    return Path(compose.__file__).parent / "docker-compose"


def test_compose_file_is_valid(tmp_path: Path) -> None:
    shutil.copy(REPO / "docker-compose.yml", tmp_path / "docker-compose.yml")
    shutil.copy(REPO / ".env.example", tmp_path / ".env")
    for rel in ("deploy/prometheus", "deploy/grafana"):
        shutil.copytree(REPO / rel, tmp_path / rel)
    proc = subprocess.run(
        [str(compose_binary()), "-f", "docker-compose.yml", "config", "-q"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def test_compose_rejects_a_broken_file(tmp_path: Path) -> None:
    (tmp_path / "docker-compose.yml").write_text("services:\n  web:\n    ports: 12\n")
    proc = subprocess.run(
        [str(compose_binary()), "-f", "docker-compose.yml", "config", "-q"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode != 0
