"""docker-compose.yml passes Compose v2's own validation, with and without an `.env`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def compose_binary() -> Path:
    compose = pytest.importorskip("compose")
    # the package's console wrapper always exits 0: call the ELF inside it
    return Path(compose.__file__).parent / "docker-compose"


def compose_config(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(compose_binary()), "-f", "docker-compose.yml", "config", *args],
        cwd=cwd, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def project_copy(tmp_path: Path) -> Path:
    shutil.copy(REPO / "docker-compose.yml", tmp_path / "docker-compose.yml")
    for rel in ("deploy/prometheus", "deploy/grafana"):
        shutil.copytree(REPO / rel, tmp_path / rel)
    return tmp_path


def test_compose_starts_with_no_env_file(tmp_path: Path) -> None:
    """`docker compose up` needs no other step: every variable has a default."""
    cwd = project_copy(tmp_path)
    proc = compose_config(cwd, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert "variable is not set" not in proc.stderr, proc.stderr
    config = json.loads(proc.stdout)
    services = config["services"]
    for name in ("writer", "poller", "web", "archiver", "media", "nats", "s3"):
        assert services[name].get("healthcheck"), f"{name} has no health check"
        assert services[name].get("restart") == "unless-stopped", name
    # separate images: no browser in the API image
    assert services["web"]["image"] == services["writer"]["image"] == "dla-api:latest"
    assert services["archiver"]["image"] == services["media"]["image"] == "dla-worker:latest"
    # the web reads the database from a read-only mount
    web_volumes = services["web"]["volumes"]
    assert any(v["target"] == "/data" and v.get("read_only") for v in web_volumes), web_volumes


def test_compose_takes_secrets_from_env_file(tmp_path: Path) -> None:
    cwd = project_copy(tmp_path)
    shutil.copy(REPO / ".env.example", cwd / ".env")
    (cwd / ".env").write_text(
        (cwd / ".env").read_text() + "AWS_SECRET_ACCESS_KEY=from-the-env-file\n"
    )
    proc = compose_config(cwd, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    config = json.loads(proc.stdout)
    assert config["services"]["writer"]["environment"]["AWS_SECRET_ACCESS_KEY"] == (
        "from-the-env-file"
    )


def test_compose_rejects_a_broken_file(tmp_path: Path) -> None:
    (tmp_path / "docker-compose.yml").write_text("services:\n  web:\n    ports: 12\n")
    assert compose_config(tmp_path, "-q").returncode != 0


def test_dockerfiles_pass_hadolint() -> None:
    hadolint = Path(sys.executable).parent / "hadolint"
    if not hadolint.exists():
        pytest.skip("hadolint not installed")
    files = [str(REPO / "Dockerfile"), str(REPO / "Dockerfile.worker")]
    files += [str(p) for p in sorted((REPO / "deploy" / "containers").glob("*.Containerfile"))]
    proc = subprocess.run([str(hadolint), *files], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_api_image_has_no_browser_and_worker_image_has_one() -> None:
    api = (REPO / "Dockerfile").read_text()
    worker = (REPO / "Dockerfile.worker").read_text()
    api_steps = [line for line in api.splitlines() if not line.startswith("#")]
    assert not any("chromium" in line or "ffmpeg" in line for line in api_steps)
    assert "chromium" in worker and "ffmpeg" in worker
