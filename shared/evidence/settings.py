"""The settings that shape evidence: which timestamp authorities, which roots to trust."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from shared.settings import split_urls


class EvidenceSettings(BaseSettings):
    """Timestamp authorities and trust (read by the workers, the writer and `dla verify`)."""

    model_config = SettingsConfigDict(env_prefix="", extra="ignore", case_sensitive=False)

    tsa_urls: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="RFC 3161 timestamp authorities, comma-separated (empty: no timestamps);"
        " each capture's manifest is timestamped by every one.",
    )
    tsa_ca_file: Path | None = Field(
        None,
        description="A PEM bundle of root certificates trusted for timestamp tokens, beside the"
        " system's (an authority whose root no system bundle holds, such as FreeTSA's).",
    )
    tsa_timeout_seconds: float = Field(
        20, gt=0, description="Seconds one timestamp request may take."
    )

    tsa_retry_seconds: float = Field(
        60,
        gt=0,
        description="Delay before a timestamp that was not granted is asked for again; it grows"
        " 1, 2, 5, 15, 60 times this, then every 360 times this (6 h by default).",
    )

    @field_validator("tsa_urls", mode="before")
    @classmethod
    def _split(cls, value: str | list[str]) -> list[str]:
        return split_urls(value)
