"""Alerts reach a person: `dla up`'s Prometheus and Alertmanager (Debian's packages) send a
stopped service's alert to a webhook, then its resolution; with no destination they say
alerts go nowhere and start nothing."""

from __future__ import annotations

import json
import re
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.supervisor.alerting import AlertSettings, alertmanager_config, describe
from services.supervisor.alertstack import RULES
from services.supervisor.stack import Stack
from testkit.stack_env import ENGINES_GRACE_S, own_engines_env
from testkit.webhook import WebhookReceiver

pytestmark = pytest.mark.integration


def fast_rules(tmp_path: Path) -> Path:
    """The project's rules with ServiceDown's `for` cut to nothing, so a test need not wait
    its 5 minutes (the rules' own timing is tested by promtool: test_alerts.py)."""
    text = RULES.read_text()
    rule = re.search(r"- alert: ServiceDown\n(?:\s+.*\n)*?\s+for: \S+", text)
    assert rule is not None, "ServiceDown has a `for:` in deploy/prometheus/alerts.yml"
    fast = text.replace(rule.group(0), re.sub(r"for: \S+$", "for: 0s", rule.group(0)))
    path = tmp_path / "alerts.yml"
    path.write_text(fast)
    return path


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as r:
        yield r


def test_a_stopped_service_alerts_a_webhook_then_resolves(
    tmp_path: Path, receiver: WebhookReceiver
) -> None:
    if not (shutil.which("prometheus") and shutil.which("prometheus-alertmanager")):
        pytest.skip("prometheus or prometheus-alertmanager not installed")
    env = own_engines_env(
        ALERT_WEBHOOK_URL=receiver.url, ALERT_RULES_FILE=str(fast_rules(tmp_path)),
        ALERT_SCRAPE_SECONDS="1", ALERT_GROUP_WAIT="1s", ALERT_GROUP_INTERVAL="1s",
        RSS_URL="http://127.0.0.1:9/posts.rss",
    )  # fmt: skip
    stack = Stack(data_dir=tmp_path / "data", env=env, services=["poller"])
    try:
        stack.start_engines()
        stack.start_services()
        where = stack.start_alerting()
        assert where == f"alerts go to webhook {receiver.url}"
        poller = stack.procs["poller"].child
        poller.signal(signal.SIGSTOP)  # stopped, not dead: nobody restarts it
        firing = receiver.wait_for("firing", "ServiceDown", timeout=90)
        labels = next(a["labels"] for a in firing["alerts"] if a["labels"]["job"] == "poller")
        assert labels["alertname"] == "ServiceDown"
        poller.signal(signal.SIGCONT)
        resolved = receiver.wait_for("resolved", "ServiceDown", timeout=90)
        assert all(a["status"] == "resolved" for a in resolved["alerts"])
    finally:
        stack.stop(engines_grace_s=ENGINES_GRACE_S)


def test_no_destination_starts_nothing_and_says_so(tmp_path: Path) -> None:
    stack = Stack(data_dir=tmp_path, env=own_engines_env(), services=[])
    assert stack.start_alerting().startswith("alerts go nowhere")
    assert stack.alerts is None


def test_alertmanager_config_sends_both_ways_and_logs_no_secret() -> None:
    settings = AlertSettings(
        alert_webhook_url="https://user:pw@hooks.example/abc?token=t0k",
        alert_email_to="ops@example.org", smtp_host="smtp.example.org",
        smtp_username="dla", smtp_password="s3cret",  # type: ignore[arg-type]
    )  # fmt: skip
    receiver = alertmanager_config(settings)["receivers"][0]
    assert receiver["webhook_configs"][0]["send_resolved"] is True
    email = receiver["email_configs"][0]
    assert (email["smarthost"], email["auth_password"]) == ("smtp.example.org:587", "s3cret")
    line = describe(settings)
    assert "https://hooks.example/abc" in line and "ops@example.org" in line
    assert not any(secret in line for secret in ("pw", "t0k", "s3cret"))
    assert "s3cret" not in repr(settings)
    json.dumps(alertmanager_config(settings))  # what is written must be serialisable


def test_email_without_a_server_is_refused() -> None:
    with pytest.raises(ValueError, match="SMTP_HOST"):
        AlertSettings(alert_email_to="ops@example.org").check()
