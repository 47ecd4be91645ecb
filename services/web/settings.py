"""Web settings."""

from __future__ import annotations

from pydantic import Field

from shared.settings import CommonSettings


class WebSettings(CommonSettings):
    """Settings of the web service."""

    web_host: str = Field("127.0.0.1", description="Bind address of the UI.")
    web_port: int = Field(8000, description="Port of the UI (also serves /healthz, /metrics).")
    presign_seconds: int = Field(3600, gt=0, description="Lifetime of artifact download links.")
    s3_public_endpoint: str | None = Field(
        None,
        description="S3 endpoint browsers use for artifact links, when it differs from "
        "S3_ENDPOINT (e.g. http://s3:8333 inside compose, a public URL outside).",
    )
