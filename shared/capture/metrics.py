"""Metrics of the capture workers (archiver and media share them; `service` tells them apart)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

JOBS_DONE = Counter(
    "dla_capture_jobs_total",
    "Capture jobs a worker finished or put back, by outcome (succeeded, retry, nak, invalid,"
    " deferred)",
    ["service", "outcome"],
)
JOB_SECONDS = Histogram(
    "dla_capture_job_duration_seconds",
    "Wall time of one capture job",
    ["service"],
    buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800, 3600),
)
HOOK_SECONDS = Histogram(
    "dla_capture_hook_duration_seconds",
    "Wall time of one hook run, by plugin and final status",
    ["service", "plugin", "status"],
    buckets=(0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600),
)
ARTIFACT_BYTES = Counter(
    "dla_capture_artifact_bytes_total", "Artifact bytes stored in S3, by kind", ["service", "kind"]
)
S3_ERRORS = Counter(
    "dla_capture_s3_errors_total", "S3 operations that failed", ["service", "operation"]
)
DOWNLOADED = Counter(
    "dla_capture_download_bytes_total",
    "Bytes hooks reported downloaded (their Progress records), by plugin",
    ["service", "plugin"],
)
IN_PROGRESS = Gauge(
    "dla_capture_download_in_progress_bytes",
    "Bytes downloaded so far by the jobs running now (Progress records)",
    ["service"],
)
PERCENT = Gauge(
    "dla_capture_download_percent",
    "Percent done of the latest download that knows its size, by plugin",
    ["service", "plugin"],
)
CHECK_SECONDS = Histogram(
    "dla_capture_check_duration_seconds",
    "Wall time of one liveness check, by answer (present, gone, unknown)",
    ["answer"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300),
)
OUTCOMES = ("succeeded", "retry", "nak", "invalid", "deferred")


def initialise(service: str) -> None:
    """Export every bounded label set at zero, so dashboards see series before the first event."""
    for outcome in OUTCOMES:
        JOBS_DONE.labels(service, outcome)
    for operation in ("upload", "bucket"):
        S3_ERRORS.labels(service, operation)
    IN_PROGRESS.labels(service)
