"""The writer's Prometheus metrics (named dla_writer_<thing>_<unit>; labels are bounded)."""

from __future__ import annotations

from typing import get_args

from prometheus_client import Counter, Gauge, Histogram

from shared.platforms.outcome import Answer

MESSAGES = Counter(
    "dla_writer_messages_total",
    "Messages handled by the writer",
    ["subject", "outcome"],  # applied | duplicate | terminated | retried
)
CONSUMER_PENDING = Gauge(
    "dla_writer_consumer_pending_messages",
    "JetStream messages not yet delivered, per durable consumer (every service's)",
    ["durable"],
)
CONSUMER_ACK_PENDING = Gauge(
    "dla_writer_consumer_ack_pending_messages",
    "JetStream messages delivered but not yet acknowledged, per durable consumer",
    ["durable"],
)
APPLY_SECONDS = Histogram(
    "dla_writer_apply_duration_seconds",
    "Time to apply and commit one batch",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
BATCH_SIZE = Histogram(
    "dla_writer_batch_size_messages",
    "Messages per applied batch",
    buckets=(1, 5, 10, 25, 50, 100, 250, 500, 1000),
)
JOBS = Gauge("dla_writer_jobs", "Archive jobs queued or running, by kind", ["kind", "status"])
DISPATCHED = Counter("dla_writer_jobs_dispatched_total", "Jobs published", ["subject"])
JOB_OUTCOMES = Counter(
    "dla_writer_job_outcomes_total",
    "Ends of job attempts: succeeded, retry (backoff) or failed (for good)",
    ["outcome"],
)
HOOK_RESULTS = Counter(
    "dla_writer_hook_results_total",
    "Final hook results recorded, by plugin, status and error code",
    ["plugin", "status", "error_code"],
)
LOGGED_OUT = Counter(
    "dla_writer_logged_out_total",
    "Captures that sent the operator's cookies for a site and met its login wall (the session"
    " expired: renew COOKIES_DIR/<domain>.txt), by plugin and registrable domain",
    ["plugin", "domain"],  # bounded: only sites with a cookies file send cookies
)
POLICY_DECISIONS = Counter(
    "dla_writer_policy_decisions_total",
    "Policy decisions on link occurrences and requests, by decision and reason",
    ["decision", "reason"],
)
TOMBSTONES_OTHER_KEY = Gauge(
    "dla_writer_tombstones_other_key",
    "Takedown tombstones made under another TAKEDOWN_KEY than the writer's (they match nothing)",
)
BACKUPS = Counter("dla_writer_backups_total", "Database backups", ["outcome"])
LAST_BACKUP = Gauge(
    "dla_writer_last_backup_timestamp_seconds", "Unix time of the newest database backup in S3"
)
DOMAIN_LINKS = Gauge(
    "dla_writer_domain_links", "Links of the top domains (the rest as 'other')", ["domain"]
)
DOMAIN_JOBS = Gauge(
    "dla_writer_domain_jobs", "Jobs of the top domains by status", ["domain", "status"]
)
LIVENESS_CHECKS = Counter(
    "dla_writer_liveness_checks_total",
    "Liveness checks of archived originals recorded, by answer (present, gone, unknown)",
    ["answer"],
)
LIVENESS_DISPATCHED = Counter(
    "dla_writer_liveness_dispatched_total", "Liveness checks dispatched to the archivers"
)
TOP_DOMAINS = 20
"""How many domains get their own label value; the rest are summed under `other`."""


def initialise() -> None:
    """Export the bounded label sets at zero, so dashboards see them before the first event."""
    for outcome in ("succeeded", "retry", "failed"):
        JOB_OUTCOMES.labels(outcome)
    for kind in ("capture", "media"):
        for status in ("queued", "running"):
            JOBS.labels(kind, status)
    for outcome in ("ok", "failed"):
        BACKUPS.labels(outcome)
    for answer in get_args(Answer):
        LIVENESS_CHECKS.labels(answer)
