"""A whole archiver on one machine: engines (unless given) plus every service as a process."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from services.supervisor.alerting import describe
from services.supervisor.alertstack import AlertStack, AlertStackSettings, start_alerting
from services.supervisor.children import Child, free_ports, stop_all
from services.supervisor.infra import (
    Nats,
    Weed,
    load_or_create_credentials,
    start_nats,
    start_weed,
)
from services.supervisor.names import SERVICES as SERVICES  # re-exported
from services.supervisor.restarts import Restarts
from shared.errors import ConfigError
from shared.settings import fields_from_env

DECLARE_TIMEOUT_S = 180.0
"""Bound on declaring the streams and the bucket in their own process (a minute of it may be
spent waiting for a freshly started S3)."""

log = logging.getLogger(__name__)


STOP_GRACE_S = 8.0
"""How long services get to stop after SIGTERM before they are killed."""
ENGINES_GRACE_S = 3.0
"""The same for nats-server and weed (after the services, which need them to drain)."""


@dataclass
class ServiceProc:
    """A service process and its restart bookkeeping."""

    child: Child
    restarts: Restarts


@dataclass
class Stack:
    """Starts and stops the engines and services; used by `dla up` and the end-to-end tests."""

    data_dir: Path
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    services: Sequence[str] = SERVICES
    log_dir: Path | None = None
    nats: Nats | None = None
    weed: Weed | None = None
    procs: dict[str, ServiceProc] = field(default_factory=dict)
    alerts: AlertStack | None = None
    metrics_targets: dict[str, list[str]] = field(default_factory=dict)
    """Each service's /metrics address ({service: ["127.0.0.1:port"]}), for Prometheus."""
    declare_apart: bool = False
    """Declare the streams and the bucket in a short process of their own (`dla up`: its
    supervisor lives as long as the stack and need not hold the NATS and S3 clients)."""
    _engine_restarts: dict[str, Restarts] = field(
        default_factory=lambda: {"nats": Restarts("nats"), "s3": Restarts("s3")}
    )

    def start_engines(self) -> None:
        """Start nats-server and weed mini unless NATS_URL / S3_ENDPOINT point elsewhere."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.env["DATA_DIR"] = str(self.data_dir)
        logs = self.log_dir or self.data_dir / "logs"
        if not self.env.get("NATS_URL"):
            self.nats = start_nats(self.data_dir / "nats", logs / "nats.log")
            self.env["NATS_URL"] = self.nats.url
        if not self.env.get("S3_ENDPOINT"):
            creds = load_or_create_credentials(self.data_dir)
            bucket = self.env.get("S3_BUCKET", "link-archive")
            self.weed = start_weed(self.data_dir / "s3", bucket, creds, logs / "s3.log")
            self.env["S3_ENDPOINT"] = self.weed.endpoint
            self.env["AWS_ACCESS_KEY_ID"] = creds.access_key
            self.env["AWS_SECRET_ACCESS_KEY"] = creds.secret_key
        self._declare()

    def _declare(self) -> None:
        """The streams and the bucket (services.supervisor.declare): in a short process of
        its own with `declare_apart` (the supervisor of `dla up` never loads the NATS and S3
        clients), else here."""
        if not self.declare_apart:
            from services.supervisor.declare import declare

            asyncio.run(declare(self.env))
            return
        argv = [sys.executable, "-m", "services.supervisor.declare"]
        try:
            # its log lines ("waiting for S3") and its error go where the supervisor's go
            done = subprocess.run(argv, env=self.env, timeout=DECLARE_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired as exc:
            raise ConfigError(
                f"declaring the streams and the bucket took past {exc.timeout:g} s"
            ) from exc
        if done.returncode != 0:
            raise ConfigError(f"declaring the streams and the bucket failed (exit code "
                              f"{done.returncode}; its error is logged above)")  # fmt: skip

    def start_services(self, extra_env: Mapping[str, Mapping[str, str]] | None = None) -> None:
        """Start every service as `python -m services.<name>`, each with its own metrics port."""
        logs = self.log_dir or self.data_dir / "logs"
        ports = free_ports(len(self.services))
        for name, port in zip(self.services, ports, strict=True):
            env = dict(self.env)
            env.setdefault("PYTHONUNBUFFERED", "1")
            # glibc gives each thread that allocates its own arena, up to 8 a core; a
            # service's worker threads (asyncio.to_thread, S3 upload parts) each keep theirs,
            # with the freed buffers in it, for the process's life. Two bound that
            # (docs/operations.md, "Things to know"). A buffer of 4 MiB or more (a body, a
            # page's DOM, an upload part) is mapped apart and given back when freed: glibc
            # otherwise raises that bound to the largest buffer freed (up to 32 MiB), after
            # which such buffers stay in the heap, ~60 MB of the archiver's after hostile pages.
            env.setdefault("MALLOC_ARENA_MAX", "2")
            env.setdefault("MALLOC_MMAP_THRESHOLD_", str(4 << 20))
            if name != "web":
                env["METRICS_PORT"] = str(port)
                self.metrics_targets[name] = [f"127.0.0.1:{port}"]
            else:
                self.metrics_targets[name] = [f"127.0.0.1:{env.get('WEB_PORT', '8000')}"]
            env.update((extra_env or {}).get(name, {}))
            child = Child(
                name, [sys.executable, "-m", f"services.{name}"], env, logs / f"{name}.log"
            )
            self.procs[name] = ServiceProc(child.start(), Restarts(name))

    def start_alerting(self) -> str:
        """Prometheus and Alertmanager when ALERT_WEBHOOK_URL or ALERT_EMAIL_TO is set
        (services.supervisor.alertstack); returns where alerts go, in words."""
        settings = AlertStackSettings.model_validate(fields_from_env(self.env, AlertStackSettings))
        if settings.destinations():
            logs = self.log_dir or self.data_dir / "logs"
            self.alerts = start_alerting(settings, self.metrics_targets, self.data_dir, logs)
        return describe(settings)

    def supervise_once(self) -> None:
        """Restart any service or embedded engine that died (delay 1 s .. 60 s, reset after a
        healthy stretch; see services.supervisor.restarts), logging why it ended."""
        now = time.monotonic()
        for sp in self.procs.values():
            if sp.child.alive():
                sp.restarts.running(now)
            elif sp.restarts.exited(_returncode(sp.child), now):
                sp.child.start()
        self._supervise_engines(now)

    def _supervise_engines(self, now: float) -> None:
        if self.nats is not None:
            if self.nats.child.alive():
                self._engine_restarts["nats"].running(now)
            elif self._engine_restarts["nats"].exited(_returncode(self.nats.child), now):
                try:
                    self.restart_nats()
                except ConfigError as exc:
                    log.error("NATS did not come back: %s", exc)
        if self.weed is not None:
            if self.weed.child.alive():
                self._engine_restarts["s3"].running(now)
            elif self._engine_restarts["s3"].exited(_returncode(self.weed.child), now):
                try:
                    self.start_s3_again()
                except ConfigError as exc:
                    log.error("S3 did not come back: %s", exc)

    def restart_nats(self) -> None:
        """Stop the embedded nats-server and start it again on the same port and store."""
        assert self.nats is not None
        port = self.nats.port
        self.nats.child.stop()
        logs = self.log_dir or self.data_dir / "logs"
        self.nats = start_nats(self.data_dir / "nats", logs / "nats.log", port=port)

    def stop_s3(self) -> None:
        """Stop the embedded S3 server (to test what happens while it is down)."""
        assert self.weed is not None
        self.weed.child.stop()

    def start_s3_again(self) -> None:
        """Start the embedded S3 server again on the same ports and data."""
        assert self.weed is not None
        logs = self.log_dir or self.data_dir / "logs"
        creds = load_or_create_credentials(self.data_dir)
        bucket = self.env.get("S3_BUCKET", "link-archive")
        self.weed = start_weed(
            self.data_dir / "s3", bucket, creds, logs / "s3.log", ports=self.weed.ports
        )

    def stop(
        self,
        grace_s: float = STOP_GRACE_S,
        engines_grace_s: float = ENGINES_GRACE_S,
        hurry: Callable[[], bool] = lambda: False,
    ) -> None:
        """Stop services, then the engines: SIGTERM to each process group, SIGKILL to what is
        left after the grace period or as soon as `hurry()` says so (a second Ctrl-C)."""
        stop_all([sp.child for sp in self.procs.values()], grace_s, hurry)
        engines = [e.child for e in (self.weed, self.nats) if e is not None]
        engines += self.alerts.children() if self.alerts is not None else []
        stop_all(engines, engines_grace_s, hurry)


def _returncode(child: Child) -> int | None:
    return child.proc.returncode if child.proc is not None else None
