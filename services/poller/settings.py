"""Poller settings (names as in the seed spec §11)."""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import Field, field_validator

from shared.links.urlparts import supported_scheme
from shared.settings import CommonSettings, CsvList, split_urls

EXAMPLE = "https://forum.example/posts.rss"


def feed_url(url: str) -> str:
    """A feed's URL as given, or ValueError when it is not an http(s) URL with a host."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        host = None
    if not (supported_scheme(url) and host):
        raise ValueError(f"{url!r} is not a feed's URL (http or https, like {EXAMPLE})")
    return url


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

    @field_validator("feeds", mode="before")
    @classmethod
    def _split(cls, value: str | list[str]) -> list[str]:
        # (FEEDS from the environment is one comma-separated string)
        return [feed_url(url) for url in split_urls(value)]

    @field_validator("rss_url")
    @classmethod
    def _feed(cls, value: str) -> str:
        return feed_url(value.strip())

    def model_post_init(self, _: object) -> None:
        self.feeds = self.feeds or [self.rss_url]

    def idle(self) -> list[str]:
        """What is set but does nothing (`Service.more_setting_problems`): an RSS_URL that
        FEEDS leaves out (FEEDS lists every feed watched)."""
        if "rss_url" in self.model_fields_set and self.rss_url not in self.feeds:
            return [
                f"RSS_URL={self.rss_url!r} is not watched: FEEDS lists the feeds (add it there)"
            ]
        return []
