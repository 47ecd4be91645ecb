"""Web settings."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, ValidationInfo, field_validator

from services.web.replay import origin
from shared.domain_policy_settings import DomainPolicySettings


class WebSettings(DomainPolicySettings):
    """Settings of the web service."""

    web_host: str = Field("127.0.0.1", description="Bind address of the UI.")
    web_port: int = Field(8000, description="Port of the UI (also serves /healthz, /metrics).")
    artifact_delivery: Literal["presigned", "proxy"] = Field(
        "presigned",
        description="How artifacts reach browsers: a short-lived presigned S3 URL (redirect) "
        "or streamed through the web app (proxy).",
    )
    presign_seconds: int = Field(
        300, gt=0, le=7 * 86400, description="Lifetime of presigned artifact links."
    )
    s3_public_endpoint: str | None = Field(
        None,
        description="S3 endpoint browsers use for artifact links, when it differs from "
        "S3_ENDPOINT (e.g. http://s3:8333 inside compose, a public URL outside).",
    )
    admin_token: SecretStr | None = Field(
        None,
        description="When set, POST /submit and POST /links/{id}/rearchive need it "
        "(`Authorization: Bearer <token>` or the form field `token`).",
    )
    actions_per_client: int = Field(
        20, ge=1, description="Submissions + re-archive requests one client may make per window."
    )
    actions_window_seconds: int = Field(
        600, gt=0, description="The window of ACTIONS_PER_CLIENT, in seconds."
    )
    rearchive_interval_seconds: int = Field(
        300, ge=0, description="Seconds between two accepted re-archive requests of one link."
    )
    health_timeout_seconds: float = Field(
        1.5, gt=0, le=10, description="Time /healthz gives each check (S3, NATS) before 'down'."
    )
    db_pool_size: int = Field(
        8, ge=1, le=64, description="Read-only database connections (of each worker process)."
    )
    web_workers: int = Field(
        1,
        ge=1,
        le=64,
        description="Processes serving the UI on WEB_PORT, each with its own event loop, "
        "database connections and query threads (one Python process runs its Python code on "
        "one core at a time). Set it to the number of cores for a public site; 1 serves in "
        "the service process itself.",
    )
    replay_origin: str = Field(
        "",
        description="Origin (scheme://host[:port]) on which captures are replayed in the "
        "reader's browser, by host name apart from the UI's; empty: "
        "http://replay.localhost:WEB_PORT when WEB_HOST is a loopback address, else no "
        "replay; `off`: no replay.",
    )
    replay_bundle_dir: Path | None = Field(
        None,
        description="Where the pinned ReplayWeb.page files are (default: the checkout's "
        ".cache/replaywebpage-<version>, filled by `make bootstrap`).",
    )

    @field_validator("replay_origin")
    @classmethod
    def _replay_origin_parses(cls, value: str, info: ValidationInfo) -> str:
        if value.strip() and value.strip().lower() != origin.OFF:
            origin.parse(value)
            host = info.data.get("web_host")
            if isinstance(host, str):  # not its UI's host (origin.effective says why)
                origin.effective(value, host, int(info.data.get("web_port") or 0))
        return value

    def idle(self) -> list[str]:
        """What is set but does nothing (`Service.more_setting_problems`): a UI not on a
        loopback address with no REPLAY_ORIGIN offers no replay."""
        if not self.replay_origin.strip() and self.replay() is None:
            why = f"WEB_HOST={self.web_host!r} is not a loopback address and REPLAY_ORIGIN is"
            return [f"no replay of captures: {why} empty (name an origin of its own, or `off`)"]
        return []

    def replay(self) -> str | None:
        """The replay origin in effect, or None (no replay); raises when it names the UI's
        own host."""
        return origin.effective(self.replay_origin, self.web_host, self.web_port)
