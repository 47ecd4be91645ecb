"""A real Prometheus (Debian's `prometheus`) scraping a running stack, for dashboard tests."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from services.supervisor.children import free_ports

SCRAPE_SECONDS = 1


class Prometheus:
    """Prometheus on 127.0.0.1 scraping `targets` ({job: ["host:port", ...]}) every second."""

    def __init__(self, workdir: Path, targets: dict[str, list[str]]) -> None:
        binary = shutil.which("prometheus")
        if binary is None:
            pytest.skip("prometheus not installed (Debian package prometheus)")
        (self.port,) = free_ports(1)
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        config = {
            "global": {"scrape_interval": f"{SCRAPE_SECONDS}s", "evaluation_interval": "1s"},
            "scrape_configs": [
                {"job_name": job, "static_configs": [{"targets": hosts}]}
                for job, hosts in targets.items()
            ],
        }
        (workdir / "prometheus.yml").write_text(json.dumps(config))
        self.log = (workdir / "prometheus.log").open("wb")
        self.proc = subprocess.Popen(
            [
                binary, f"--config.file={workdir / 'prometheus.yml'}",
                f"--storage.tsdb.path={workdir / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],
            stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.base = f"http://127.0.0.1:{self.port}"
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base}/-/ready", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        self.stop()
        pytest.fail("prometheus did not start: " + (self.workdir / "prometheus.log").read_text())

    def query(self, expr: str) -> dict[str, Any]:
        """The API's answer to an instant query (raises on an HTTP error)."""
        reply = httpx.get(f"{self.base}/api/v1/query", params={"query": expr}, timeout=10)
        body: dict[str, Any] = reply.json()
        return body

    def targets_up(self) -> dict[str, str]:
        """scrape URL -> health of every active target."""
        active = httpx.get(f"{self.base}/api/v1/targets", timeout=5).json()["data"]["activeTargets"]
        return {t["scrapeUrl"]: t["health"] for t in active}

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()
