# ruff: noqa: E501
"""Writes the provisioned Grafana dashboards (dashboards/*.json) from the panel lists below.

Run `python deploy/grafana/build.py` after editing; tests/deploy/test_dashboards.py fails when
the JSON files are not what this script writes, and tests/e2e/test_observability.py runs every
query against a real Prometheus scraping a stack after a fixture run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "dashboards"
DATASOURCE = {"type": "prometheus", "uid": "prometheus"}

Panel = tuple[str, str, str]  # title, PromQL, unit ("" = plain number)

BOARDS: dict[str, tuple[str, list[Panel]]] = {
    "overview": (
        "Link archiver: overview",
        [
            (
                "Seconds since last good poll",
                "time() - max by (feed) (dla_poller_last_success_timestamp_seconds)",
                "s",
            ),
            (
                "Feed polls by outcome (per min)",
                "sum by (outcome) (rate(dla_poller_polls_total[5m])) * 60",
                "",
            ),
            ("Posts published (per min)", "sum(rate(dla_poller_posts_total[5m])) * 60", ""),
            (
                "Links seen (per min)",
                "sum by (in_quote) (rate(dla_poller_links_total[5m])) * 60",
                "",
            ),
            (
                "Policy decisions by reason (per hour)",
                "sum by (decision, reason) (increase(dla_writer_policy_decisions_total[1h]))",
                "",
            ),
            ("Archive jobs by status", "sum by (kind, status) (dla_writer_jobs)", ""),
            (
                "Captures finished by outcome (per min)",
                "sum by (service, outcome) (rate(dla_capture_jobs_total[5m])) * 60",
                "",
            ),
            (
                "Liveness checks of the originals by answer (per hour)",
                "sum by (answer) (increase(dla_writer_liveness_checks_total[1h]))",
                "",
            ),
            ("Backup age", "time() - dla_writer_last_backup_timestamp_seconds", "s"),
            ("Service restarts (15 min)", "changes(process_start_time_seconds[15m])", ""),
        ],
    ),
    "pipeline": (
        "Link archiver: capture pipeline",
        [
            (
                "JetStream pending per durable",
                "max by (durable) (dla_writer_consumer_pending_messages)",
                "",
            ),
            (
                "JetStream ack-pending per durable",
                "max by (durable) (dla_writer_consumer_ack_pending_messages)",
                "",
            ),
            (
                "Jobs dispatched (per min)",
                "sum by (subject) (rate(dla_writer_jobs_dispatched_total[5m])) * 60",
                "",
            ),
            (
                "Job attempts ended, by outcome (per hour)",
                "sum by (outcome) (increase(dla_writer_job_outcomes_total[1h]))",
                "",
            ),
            (
                "Capture duration p95",
                "histogram_quantile(0.95, sum by (le, service) (rate(dla_capture_job_duration_seconds_bucket[5m])))",
                "s",
            ),
            (
                "Hook duration p95 by plugin",
                "histogram_quantile(0.95, sum by (le, plugin) (rate(dla_capture_hook_duration_seconds_bucket[5m])))",
                "s",
            ),
            (
                "Hook failures by plugin and error code (per hour)",
                'sum by (plugin, error_code) (increase(dla_writer_hook_results_total{status="failed"}[1h]))',
                "",
            ),
            (
                "Hooks by plugin and status (per min)",
                "sum by (plugin, status) (rate(dla_capture_hook_duration_seconds_count[5m])) * 60",
                "",
            ),
            (
                "Artifact bytes stored (per s)",
                "sum by (kind) (rate(dla_capture_artifact_bytes_total[5m]))",
                "Bps",
            ),
            (
                "S3 errors (per min)",
                "sum by (service, operation) (rate(dla_capture_s3_errors_total[5m])) * 60",
                "",
            ),
            (
                "Browser restarts by reason (per hour)",
                "sum by (reason) (increase(dla_archiver_browser_restarts_total[1h]))",
                "",
            ),
            (
                "Browser memory (PSS of its process tree)",
                "max by (instance) (dla_archiver_browser_pss_bytes)",
                "bytes",
            ),
            (
                "Pages stopped at the renderer memory limit (per hour)",
                "sum by (instance) (increase(dla_archiver_renderer_kills_total[1h]))",
                "",
            ),
            (
                "Media bytes downloaded (per s)",
                "sum by (plugin) (rate(dla_capture_download_bytes_total[5m]))",
                "Bps",
            ),
            (
                "Writer messages applied (per s)",
                "sum by (subject, outcome) (rate(dla_writer_messages_total[5m]))",
                "",
            ),
            (
                "Writer apply latency p99",
                "histogram_quantile(0.99, sum by (le) (rate(dla_writer_apply_duration_seconds_bucket[5m])))",
                "s",
            ),
        ],
    ),
    "domains": (
        "Link archiver: per domain",
        [
            ("Links by domain (top domains)", "sum by (domain) (dla_writer_domain_links)", ""),
            (
                "Jobs by domain and status (top domains)",
                "sum by (domain, status) (dla_writer_domain_jobs)",
                "",
            ),
            (
                "Failures by domain (top domains)",
                'sum by (domain) (dla_writer_domain_jobs{status=~"failed|partial"})',
                "",
            ),
        ],
    ),
    "web": (
        "Link archiver: web",
        [
            (
                "Requests by route and status (per s)",
                "sum by (route, status) (rate(dla_web_requests_total[5m]))",
                "reqps",
            ),
            (
                "Request latency p95 by route",
                "histogram_quantile(0.95, sum by (le, route) (rate(dla_web_request_seconds_bucket[5m])))",
                "s",
            ),
            (
                "Client and server errors (per min)",
                'sum by (route, status) (rate(dla_web_requests_total{status=~"[45].."}[5m])) * 60',
                "",
            ),
        ],
    ),
}


def panel(index: int, title: str, expr: str, unit: str) -> dict[str, Any]:
    return {
        "id": index + 1,
        "type": "timeseries",
        "title": title,
        "datasource": DATASOURCE,
        "gridPos": {"h": 8, "w": 12, "x": (index % 2) * 12, "y": (index // 2) * 8},
        "fieldConfig": {"defaults": {"unit": unit or "short"}, "overrides": []},
        "options": {"legend": {"displayMode": "list", "placement": "bottom"}},
        "targets": [{"refId": "A", "datasource": DATASOURCE, "expr": expr}],
    }


def dashboard(uid: str, title: str, panels: list[Panel]) -> dict[str, Any]:
    return {
        "uid": f"dla-{uid}",
        "title": title,
        "tags": ["dla"],
        "timezone": "utc",
        "schemaVersion": 39,
        "version": 1,
        "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "panels": [panel(i, *p) for i, p in enumerate(panels)],
    }


def render() -> dict[str, str]:
    """file name -> JSON text of every dashboard."""
    return {
        f"{uid}.json": json.dumps(dashboard(uid, title, panels), indent=2) + "\n"
        for uid, (title, panels) in BOARDS.items()
    }


if __name__ == "__main__":
    OUT.mkdir(exist_ok=True)
    for name, text in render().items():
        (OUT / name).write_text(text)
        print(OUT / name)
