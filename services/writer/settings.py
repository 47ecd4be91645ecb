"""Writer settings (names as in the seed spec §11)."""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from pydantic import Field, SecretStr, field_validator

from services.writer.job_policy import Policy
from services.writer.liveness.rules import DEFAULT_SCHEDULE, LivenessRules
from services.writer.liveness.schedule import parse_schedule
from services.writer.liveness.verdict import Windows
from services.writer.tombstones import TombstoneKey
from shared.capture.settings import ConcurrencySettings
from shared.domain_policy_settings import DomainPolicySettings
from shared.evidence.settings import EvidenceSettings
from shared.external.settings import ExternalSubmitSettings
from shared.hooks.retry import MAX_ATTEMPTS


class WriterSettings(
    DomainPolicySettings, EvidenceSettings, ExternalSubmitSettings, ConcurrencySettings
):
    """Settings of the writer."""

    cache_window_seconds: int = Field(
        3600, ge=0, description="A link archived this recently (canonical URL) is not re-captured."
    )
    archive_quote_only_links: bool = Field(
        False, description="Archive links that appear only inside quotes even if archived before."
    )
    worker_concurrency: int = Field(
        4, ge=1, description="Capture jobs in flight at once, across every worker."
    )
    per_domain_concurrency: int = Field(
        1, ge=1, description="Capture jobs in flight at once per registrable domain."
    )
    media_jobs_enabled: bool = Field(
        True, description="Give video links and pages showing a video a media job (yt-dlp)."
    )
    publish_logged_in_captures: bool = Field(
        False,
        description="Serve the traffic WARC, WACZ, raw response and DOM of a capture made with"
        " the site's cookies (COOKIES_DIR) to everyone; false: only with the admin token, and"
        " in no backup (they print what the page derives from the session).",
    )
    media_job_deadline_seconds: int = Field(
        3900,
        gt=0,
        description="A dispatched media job silent this long is dispatched again"
        " (MEDIA_TIMEOUT plus a margin; Progress records count as signs of life).",
    )
    max_attempts: int = Field(
        MAX_ATTEMPTS, ge=1, description="Attempts of one job (first run + retries) before it fails."
    )
    job_deadline_seconds: int = Field(
        900, gt=0, description="A dispatched job silent this long is dispatched again."
    )
    domain_stats_interval_seconds: float = Field(
        60.0,
        gt=0,
        description="Seconds between refreshes of the per-domain gauges (a scan of the links).",
    )
    backup_interval_seconds: int = Field(
        86400, ge=0, description="Seconds between database backups to S3 (0 = no backups)."
    )
    writer_batch_size: int = Field(
        1000, ge=1, description="Messages applied in one database transaction at most."
    )
    scheduler_interval_seconds: float = Field(
        0.5, gt=0, description="Seconds between two runs of the job scheduler."
    )
    writer_ack_wait_seconds: float = Field(
        30,
        ge=1,
        description="A message the writer fetched but never settled (it died) is redelivered"
        " after this many seconds.",
    )
    writer_retry_delay_seconds: float = Field(
        3,
        ge=0,
        description="Redelivery delay of messages not applied because the database was locked"
        " or its disk full.",
    )
    processed_retention_days: int = Field(
        30, ge=1, description="Days the ids of applied messages are kept for de-duplication."
    )

    takedown_objects: Literal["delete", "quarantine"] = Field(
        "delete",
        description="What a takedown does to the link's S3 objects: delete them, or move them"
        " under QUARANTINE_PREFIX (not public, for an appeal).",
    )
    takedown_undo_days: float = Field(
        7,
        ge=0,
        le=3650,
        description="Days a takedown can be undone: the link is hidden at once, what was"
        " captured of it (rows and S3 objects) is kept until then and purged after (0: purged"
        " at once, no undo).",
    )
    quarantine_prefix: str = Field(
        "quarantine/", description="Key prefix of quarantined objects of taken-down links."
    )
    takedown_key: SecretStr | None = Field(
        None,
        description="Secret the takedown tombstones kept in every backup are hashed with"
        " (environment only; unset: anyone with a backup can confirm a guessed URL was taken"
        " down). Keep it as long as the backups: a database restored under another key no"
        " longer recognises the URLs taken down before.",
    )

    liveness_enabled: bool = Field(
        True,
        description="Check archived links' originals again on the schedule (LIVENESS_SCHEDULE);"
        " off: no check is dispatched (the schedule is kept).",
    )
    liveness_schedule: str = Field(
        DEFAULT_SCHEDULE,
        description="Ages of a link's first archive at which its original is checked again"
        " (units s, m, h, d); after the last, every last age again.",
    )
    liveness_confirm_seconds: int = Field(
        259200,
        ge=0,
        description="A bare HTTP 404/410 makes a link `gone` only once consecutive `gone`"
        " answers span this long (no `present` between).",
    )
    liveness_confirm_tombstone_seconds: int = Field(
        3600,
        ge=0,
        description="The same for the platform's own tombstone (removed, deleted, suspended).",
    )
    liveness_host_checks_per_hour: int = Field(
        60,
        ge=0,
        description="Liveness checks of one registrable domain dispatched in an hour at most"
        " (0: no limit).",
    )

    @field_validator("liveness_schedule")
    @classmethod
    def _schedule(cls, value: str) -> str:
        parse_schedule(value)  # a ValueError names the bad part
        return value

    def liveness(self) -> LivenessRules:
        """The liveness rules these settings describe."""
        return LivenessRules(
            enabled=self.liveness_enabled,
            ages=parse_schedule(self.liveness_schedule),
            windows=Windows(
                confirm=timedelta(seconds=self.liveness_confirm_seconds),
                confirm_tombstone=timedelta(seconds=self.liveness_confirm_tombstone_seconds),
            ),
            concurrency=self.liveness_concurrency,
            per_domain=self.per_domain_concurrency,
            host_per_hour=self.liveness_host_checks_per_hour,
            deadline=timedelta(seconds=self.job_deadline_seconds),
        )

    def policy(self) -> Policy:
        """The decision rules these settings describe."""
        return Policy(
            cache_window=timedelta(seconds=self.cache_window_seconds),
            quote_only_links=self.archive_quote_only_links,
            max_attempts=self.max_attempts,
            job_deadline=timedelta(seconds=self.job_deadline_seconds),
            domains=self.domain_policy(),
            media_jobs=self.media_jobs_enabled,
            media_job_deadline=timedelta(seconds=self.media_job_deadline_seconds),
            takedown_key=TombstoneKey(
                self.takedown_key.get_secret_value().encode() if self.takedown_key else b""
            ),
            takedown_undo=timedelta(days=self.takedown_undo_days),
            timestamp_authorities=tuple(self.tsa_urls),
            timestamp_retry=timedelta(seconds=self.tsa_retry_seconds),
            external_services=self.external_services(),
            external_retry=timedelta(seconds=self.external_archive_retry_seconds),
            liveness=self.liveness(),
            publish_logged_in_captures=self.publish_logged_in_captures,
        )
