"""Where the alert rules' alerts go: Alertmanager's configuration from ALERT_* and SMTP_*.

deploy/prometheus/alerts.yml decides *when* something is wrong; this module decides *who
hears of it*. `dla up` starts Debian's Prometheus and Alertmanager with it when a destination
is set (services.supervisor.alertstack); the compose stack's `alert-config` service writes the
same file for its Alertmanager container (`dla alert-config PATH`). One route, one receiver:
a webhook (`ALERT_WEBHOOK_URL`, Alertmanager's JSON, resolutions too) and/or e-mail
(`ALERT_EMAIL_TO` through `SMTP_*`). With neither, alerts go nowhere and both say so.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class AlertSettings(BaseSettings):
    """ALERT_* and SMTP_*: the destinations, and how Alertmanager groups and repeats."""

    model_config = SettingsConfigDict(extra="ignore")

    alert_webhook_url: str = ""
    """A URL Alertmanager POSTs each group of alerts to (and its resolution)."""
    alert_email_to: str = ""
    """Addresses (comma-separated) to e-mail alerts and resolutions to, through SMTP_*."""
    smtp_host: str = ""
    smtp_port: int = Field(587, ge=1, le=65535)
    smtp_from: str = "dla-alerts@localhost"
    smtp_username: str = ""
    smtp_password: SecretStr = SecretStr("")
    smtp_require_tls: bool = True
    alert_group_wait: str = "30s"
    """How long Alertmanager waits to gather a group's first alerts before it sends them."""
    alert_group_interval: str = "5m"
    """How long before it sends a group again when the group changed (a new alert, a
    resolution)."""
    alert_repeat_interval: str = "4h"
    """How often an alert still firing is sent again."""

    def destinations(self) -> list[str]:
        """Where alerts go, in words (no secret): empty when they go nowhere."""
        found = []
        if self.alert_webhook_url:
            found.append(f"webhook {_without_credentials(self.alert_webhook_url)}")
        if self.alert_email_to:
            found.append(f"e-mail to {self.alert_email_to} via {self.smtp_host or '?'}")
        return found

    def check(self) -> None:
        """Refuse an e-mail destination with no server to send it through."""
        if self.alert_email_to and not self.smtp_host:
            raise ValueError("ALERT_EMAIL_TO is set but SMTP_HOST is not")


def describe(settings: AlertSettings) -> str:
    """One line for the person starting the stack: where alerts go, or that they go nowhere."""
    where = settings.destinations()
    if not where:
        return "alerts go nowhere: set ALERT_WEBHOOK_URL or ALERT_EMAIL_TO (with SMTP_HOST)"
    return "alerts go to " + " and ".join(where)


def alertmanager_config(settings: AlertSettings) -> dict[str, Any]:
    """Alertmanager's configuration (YAML is a superset of JSON: dump it as JSON)."""
    receiver: dict[str, Any] = {"name": "dla"}
    if settings.alert_webhook_url:
        receiver["webhook_configs"] = [{"url": settings.alert_webhook_url, "send_resolved": True}]
    if settings.alert_email_to:
        email: dict[str, Any] = {
            "to": settings.alert_email_to,
            "from": settings.smtp_from,
            "smarthost": f"{settings.smtp_host}:{settings.smtp_port}",
            "require_tls": settings.smtp_require_tls,
            "send_resolved": True,
        }
        if settings.smtp_username:
            email["auth_username"] = settings.smtp_username
            email["auth_password"] = settings.smtp_password.get_secret_value()
        receiver["email_configs"] = [email]
    return {
        "route": {
            "receiver": "dla",
            "group_by": ["alertname", "job", "instance"],
            "group_wait": settings.alert_group_wait,
            "group_interval": settings.alert_group_interval,
            "repeat_interval": settings.alert_repeat_interval,
        },
        "receivers": [receiver],
    }


def _without_credentials(url: str) -> str:
    """A URL for a log line: no user:password part, no query (tokens often ride there)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url.split("?", 1)[0]
    rest = rest.split("?", 1)[0]
    host, slash, path = rest.partition("/")
    return f"{scheme}://{host.rsplit('@', 1)[-1]}{slash}{path}"
