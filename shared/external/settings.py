"""The settings of the submissions to the public archives: which services (read by the
writer, which plans them) and how to reach them (read by the archivers, which submit)."""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class ExternalSubmitSettings(BaseSettings):
    """Which public archives each archived link is submitted to (the writer's)."""

    model_config = SettingsConfigDict(env_prefix="", extra="ignore", case_sensitive=False)

    wayback_submit: bool = Field(
        False,
        description="Submit each archived link to the Internet Archive's Wayback Machine (Save"
        " Page Now 2, with WAYBACK_ACCESS_KEY and WAYBACK_SECRET_KEY).",
    )
    archive_today_submit: bool = Field(
        False, description="Submit each archived link to archive.today."
    )
    external_archive_retry_seconds: float = Field(
        300,
        gt=0,
        description="Delay before a submission still in progress is polled again, or one that"
        " got no answer is asked again; it grows 1, 2, 5, 15, 60 times this, then every 360"
        " times this. A service that says when (429 Retry-After, too many captures) is asked"
        " again then.",
    )

    def external_services(self) -> tuple[str, ...]:
        """The services every archived link is submitted to."""
        return tuple(
            s
            for s, on in (
                ("wayback", self.wayback_submit),
                ("archive_today", self.archive_today_submit),
            )
            if on
        )


class ExternalServiceSettings(BaseSettings):
    """How the archivers reach the public archives."""

    model_config = SettingsConfigDict(env_prefix="", extra="ignore", case_sensitive=False)

    wayback_access_key: SecretStr | None = Field(
        None, description="Save Page Now 2 access key (env only; never stored or logged)."
    )
    wayback_secret_key: SecretStr | None = Field(
        None, description="Save Page Now 2 secret key (env only; never stored or logged)."
    )
    wayback_url: str = Field(
        "https://web.archive.org", description="Base URL of the Wayback Machine."
    )
    archive_today_url: str = Field("https://archive.ph", description="Base URL of archive.today.")
    external_archive_timeout_seconds: float = Field(
        30, gt=0, description="Seconds one request to a public archive may take."
    )
    external_archive_poll_seconds: float = Field(
        5,
        gt=0,
        description="Seconds between two polls of a submission in progress (one job polls"
        " for half the delay before its next try at most; then the next round polls it).",
    )
