"""Settings of the capture workers (archiver and media services)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from shared.evidence.settings import EvidenceSettings
from shared.external.settings import ExternalServiceSettings
from shared.settings import CommonSettings, CsvList, split_csv

REPO_PLUGINS = Path(__file__).resolve().parents[2] / "plugins"


class ConcurrencySettings(BaseSettings):
    """Concurrency settings read by the workers and the writer alike, each in its own way."""

    model_config = SettingsConfigDict(env_prefix="", extra="ignore", case_sensitive=False)

    media_concurrency: int = Field(
        1,
        ge=1,
        description="Media jobs one media worker runs at once; for the writer, the media jobs in"
        " flight across every media worker.",
    )
    liveness_concurrency: int = Field(
        8,
        ge=1,
        description="Liveness checks one archiver runs at once (beside its snapshots); for the"
        " writer, the checks in flight across every archiver.",
    )


class WorkerSettings(
    CommonSettings, EvidenceSettings, ExternalServiceSettings, ConcurrencySettings
):
    """Settings of one archiver or media worker process."""

    plugins_dir: Path = Field(REPO_PLUGINS, description="Folder holding the plugin folders.")
    media_plugins: CsvList = Field(
        default_factory=lambda: ["media"],
        description="Plugins run by the media service (and skipped by the archiver).",
    )
    archiver_concurrency: int = Field(2, ge=1, description="Snapshots one archiver runs at once.")
    archiver_long_job_seconds: float = Field(
        20,
        ge=0,
        description="A snapshot running this long (most likely waiting on a stalling server)"
        " stops holding one of the ARCHIVER_CONCURRENCY slots, and its host's other jobs"
        " are deferred this long while it runs; one done with its host still at work a"
        " tenth of this later (the text of a giant page) stops holding its slot too"
        " (0 = never).",
    )
    archiver_max_long_jobs: int = Field(
        2,
        ge=0,
        description="Long snapshots set aside from the slots at once: an archiver runs at most"
        " ARCHIVER_CONCURRENCY + this many snapshots.",
    )
    worker_stop_drain_seconds: float = Field(
        5,
        ge=0,
        description="On a stop, seconds the jobs under way get to finish; the rest are stopped"
        " (their hooks killed, browser contexts closed) and nak'ed, so JetStream hands them to"
        " a worker at once. Keep it under the supervisor's stop grace (8 s).",
    )
    job_retry_delay_seconds: float = Field(
        30, gt=0, description="Delay before a job is redelivered after S3 or NATS failed."
    )
    job_ack_wait_seconds: float = Field(
        10,
        ge=3,
        description="A job whose worker died is redelivered after this many seconds; a live"
        " worker sends in-progress acks every third of it while the job runs.",
    )

    evidence_enabled: bool = Field(
        True,
        description="Give every capture its evidence: the manifest (its fingerprint, the"
        " timestamps of TSA_URLS) and the WACZ (false: neither; the captured files are kept"
        " as they are).",
    )
    wacz_enabled: bool = Field(
        True,
        description="Package every capture's WARCs as a WACZ beside its manifest (false: the"
        " manifest and its timestamps only).",
    )

    hook_memory_limit_mb: int = Field(
        512,
        ge=0,
        description="Memory limit (RLIMIT_DATA: heap and private mappings) of every hook"
        " process, in MiB (0 = none); a plugin may set its own with <PLUGIN>_MEMORY_LIMIT_MB.",
    )
    hook_cpu_limit_seconds: float = Field(
        0,
        ge=0,
        description="CPU-time limit (RLIMIT_CPU) of every hook process (0 = the hook's timeout).",
    )

    def model_post_init(self, _: object) -> None:
        self.media_plugins = split_csv(self.media_plugins)
