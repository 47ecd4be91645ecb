"""The writer's Prometheus metrics."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

MESSAGES = Counter(
    "dla_writer_messages_total",
    "Messages handled by the writer",
    ["subject", "outcome"],  # applied | duplicate | terminated | retried
)
BACKLOG = Gauge(
    "dla_writer_backlog",
    "Messages waiting for the writer (pending + unacknowledged) per consumer",
    ["consumer"],
)
APPLY_SECONDS = Histogram(
    "dla_writer_apply_seconds",
    "Time to apply and commit one batch",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
BATCH_SIZE = Histogram(
    "dla_writer_batch_messages",
    "Messages per applied batch",
    buckets=(1, 5, 10, 25, 50, 100, 250, 500, 1000),
)
JOBS = Gauge("dla_writer_jobs", "Archive jobs by status", ["status"])
DISPATCHED = Counter("dla_writer_dispatched_total", "CaptureJobs published", ["subject"])
BACKUPS = Counter("dla_writer_backups_total", "Database backups", ["outcome"])
