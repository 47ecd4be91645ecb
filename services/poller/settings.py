"""Poller settings (names as in the seed spec §11)."""

from __future__ import annotations

from pydantic import Field

from shared.links.policy import DEFAULT_ALLOWLIST, DEFAULT_EXCLUDE
from shared.settings import CommonSettings, CsvList, split_csv


class PollerSettings(CommonSettings):
    """Settings of the poller."""

    rss_url: str = Field(
        "https://discuss.criticalfallibilism.com/posts.rss", description="The feed to watch."
    )
    feeds: CsvList = Field(
        default_factory=list, description="Several feeds, comma-separated (overrides RSS_URL)."
    )
    poll_interval_seconds: float = Field(60, gt=0, description="Seconds between polls.")
    feed_timeout_seconds: float = Field(20, gt=0, description="Connect/read timeout per request.")
    feed_max_bytes: int = Field(20 * 1024 * 1024, gt=0, description="Largest feed body accepted.")
    backfill_max_pages: int = Field(10, ge=0, description="posts.json pages fetched to fill a gap.")
    archive_mode: str = Field("deletable", pattern="^(deletable|all)$", description="Policy mode.")
    deletable_allowlist: CsvList = Field(
        default_factory=lambda: list(DEFAULT_ALLOWLIST),
        description="Registrable domains archived in deletable mode.",
    )
    exclude_domains: CsvList = Field(
        default_factory=lambda: list(DEFAULT_EXCLUDE), description="Never archived."
    )

    def model_post_init(self, _: object) -> None:
        self.feeds = [f.strip() for f in self.feeds if f.strip()] or [self.rss_url]
        self.deletable_allowlist = split_csv(self.deletable_allowlist)
        self.exclude_domains = split_csv(self.exclude_domains)
