"""Settings from environment variables, named as in the seed spec §11.

Each service builds one settings object at start-up (never at import time), from the
class below or a subclass that adds its own fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

CsvList = Annotated[list[str], NoDecode]
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def log_level(value: str) -> str:
    """A logging level as `logging` names it, in any case; ValueError for another word."""
    level = value.strip().upper()
    if level not in LOG_LEVELS:
        raise ValueError(f"a logging level is one of {', '.join(LOG_LEVELS)}")
    return level


def split_csv(value: str | list[str]) -> list[str]:
    """Split a comma-separated env value into trimmed, non-empty, lower-case items."""
    items = value if isinstance(value, list) else value.split(",")
    return [i.strip().lower() for i in items if i.strip()]


def split_urls(value: str | list[str]) -> list[str]:
    """A comma-separated list of URLs, trimmed, empty items dropped, case kept."""
    items = value if isinstance(value, list) else value.split(",")
    return [i.strip() for i in items if i.strip()]


class CommonSettings(BaseSettings):
    """Settings every service reads."""

    model_config = SettingsConfigDict(env_prefix="", extra="ignore", case_sensitive=False)

    data_dir: Path = Field(Path("./data"), description="Where local state lives.")
    nats_url: str = Field("nats://127.0.0.1:4222", description="NATS server(s), comma-separated.")
    nats_replicas: int = Field(
        1,
        ge=1,
        le=5,
        description="Replicas of every JetStream stream and key-value bucket (3 on a 3-node"
        " cluster: the streams survive the loss of a server).",
    )
    s3_endpoint: str | None = Field(None, description="S3-compatible endpoint URL; unset = AWS.")
    s3_region: str = Field("us-east-1", description="S3 region.")
    s3_bucket: str = Field("link-archive", description="Bucket for artifacts and backups.")
    s3_prefix: str = Field("archives/", description="Key prefix of artifacts.")
    s3_force_path_style: bool = Field(True, description="Path-style addressing (MinIO, SeaweedFS).")
    aws_access_key_id: SecretStr | None = Field(None, description="S3 access key (env only).")
    aws_secret_access_key: SecretStr | None = Field(None, description="S3 secret key (env only).")
    allow_private_targets: bool = Field(
        False, description="Allow capturing loopback/private/link-local targets (tests, demos)."
    )
    user_agent: str = Field(
        "DiscourseLinkArchiver/1.0 (+https://github.com/discourse-link-archiver)",
        description="User-Agent of every outgoing request.",
    )
    metrics_host: str = Field("127.0.0.1", description="Bind address of /healthz and /metrics.")
    metrics_port: int = Field(0, description="Port of /healthz and /metrics (0 = any free port).")
    log_level: str = Field(
        "INFO", description="Logging level: DEBUG, INFO, WARNING, ERROR or CRITICAL."
    )
    database_path: Path | None = Field(
        None, description="SQLite database; default DATA_DIR/archive.sqlite3."
    )

    @field_validator("log_level")
    @classmethod
    def _level(cls, value: str) -> str:
        return log_level(value)

    @property
    def db_path(self) -> Path:
        """The database file."""
        return self.database_path or self.data_dir / "archive.sqlite3"


SECRET_ENV_VARS: frozenset[str] = frozenset(
    {
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "NATS_TOKEN",
        "NATS_PASSWORD",
        "NATS_CREDS",
        "ADMIN_TOKEN",
        "ADMIN_TOKENS",
        "TAKEDOWN_KEY",
        "WAYBACK_ACCESS_KEY",
        "WAYBACK_SECRET_KEY",
    }
)
"""Environment variables that hold secrets: never logged, stored, or passed to hooks."""


def public_env(env: dict[str, str]) -> dict[str, str]:
    """A copy of env without secret variables (what hook processes get)."""
    return {k: v for k, v in env.items() if k.upper() not in SECRET_ENV_VARS}


def fields_from_env(env: Mapping[str, str], model: type[BaseSettings]) -> dict[str, str]:
    """The variables of env that are fields of `model`, by field name (names are
    case-insensitive): what `model.model_validate` reads from an environment other than the
    process's own (a stack's, which `dla up` builds before its services start)."""
    keys = set(model.model_fields)
    return {k.lower(): v for k, v in env.items() if k.lower() in keys}
