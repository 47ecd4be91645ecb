"""`dla up`'s alerting: Debian's Prometheus evaluating deploy/prometheus/alerts.yml over every
service's /metrics, and Debian's Alertmanager sending what fires to ALERT_WEBHOOK_URL and/or
ALERT_EMAIL_TO (services.supervisor.alerting). Started only when a destination is set: alerts
nobody receives are not worth two more processes. Both listen on 127.0.0.1 only (Alertmanager's
gossip port off), keep their data under DATA_DIR and stop with the engines.
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from services.supervisor.alerting import AlertSettings, alertmanager_config
from services.supervisor.children import Child, free_ports, wait_for_port
from shared.errors import ConfigError

log = logging.getLogger(__name__)

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "alerts.yml"
"""The alert rules (the same file the compose stack's Prometheus reads)."""


class AlertStackSettings(AlertSettings):
    """The embedded Prometheus's own settings, beside the destinations."""

    alert_rules_file: Path = RULES
    """The rules Prometheus evaluates (default: the project's deploy/prometheus/alerts.yml)."""
    alert_scrape_seconds: float = Field(15.0, gt=0)
    """How often Prometheus reads each service's /metrics (and evaluates the rules)."""


@dataclass
class AlertStack:
    """The running Prometheus and Alertmanager."""

    prometheus: Child
    alertmanager: Child
    prometheus_url: str
    alertmanager_url: str

    def children(self) -> list[Child]:
        return [self.prometheus, self.alertmanager]


def start_alerting(
    settings: AlertStackSettings, targets: dict[str, list[str]], data_dir: Path, logs: Path
) -> AlertStack:
    """Start Alertmanager, then Prometheus scraping `targets` ({job: ["host:port"]})."""
    settings.check()
    prometheus_bin, alertmanager_bin = _binary("prometheus"), _binary("prometheus-alertmanager")
    if not settings.alert_rules_file.is_file():
        raise ConfigError(f"alert rules not found: {settings.alert_rules_file}")
    folder = data_dir / "alerting"
    folder.mkdir(parents=True, exist_ok=True)
    am_port, prom_port = free_ports(2)
    am_config = folder / "alertmanager.yml"
    am_config.write_text(json.dumps(alertmanager_config(settings)))
    am_config.chmod(0o600)  # it may hold the SMTP password
    alertmanager = Child(
        "alertmanager",
        [
            alertmanager_bin, f"--config.file={am_config}",
            f"--storage.path={folder / 'alertmanager-data'}",
            f"--web.listen-address=127.0.0.1:{am_port}", "--cluster.listen-address=",
        ],
        log_path=logs / "alertmanager.log",
    ).start()  # fmt: skip
    every = f"{settings.alert_scrape_seconds:g}s"
    prom_config = {
        "global": {"scrape_interval": every, "evaluation_interval": every,
                   "scrape_timeout": every},
        "rule_files": [str(settings.alert_rules_file)],
        "alerting": {"alertmanagers": [{"static_configs": [
            {"targets": [f"127.0.0.1:{am_port}"]}]}]},
        "scrape_configs": [
            {"job_name": job, "static_configs": [{"targets": hosts}]}
            for job, hosts in targets.items()
        ],
    }  # fmt: skip
    (folder / "prometheus.yml").write_text(json.dumps(prom_config))
    prometheus = Child(
        "prometheus",
        [
            prometheus_bin, f"--config.file={folder / 'prometheus.yml'}",
            f"--storage.tsdb.path={folder / 'prometheus-data'}",
            f"--web.listen-address=127.0.0.1:{prom_port}",
        ],
        log_path=logs / "prometheus.log",
    ).start()  # fmt: skip
    for child, port in ((alertmanager, am_port), (prometheus, prom_port)):
        if not wait_for_port("127.0.0.1", port, 30):
            alertmanager.stop()
            prometheus.stop()
            raise ConfigError(f"{child.name} did not start (see {logs / child.name}.log)")
    return AlertStack(
        prometheus, alertmanager, f"http://127.0.0.1:{prom_port}", f"http://127.0.0.1:{am_port}"
    )


def _binary(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        package = "prometheus-alertmanager" if "alertmanager" in name else "prometheus"
        raise ConfigError(f"{name} not installed (Debian package {package})")
    return found
