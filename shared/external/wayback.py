"""The Internet Archive's Save Page Now 2 (SPN2): `POST <WAYBACK_URL>/save` with the account's
keys (`Authorization: LOW <access>:<secret>`) answers a job id; `GET /save/status/<job id>`
tells the job's status (`pending`, `success` with the snapshot's timestamp, `error` with its
`status_ext` and message). The snapshot is `<WAYBACK_URL>/web/<timestamp>/<original url>`.
The keys are sent in that header only: never in a message, a log line or an error."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
from pydantic import SecretStr

from shared.external.answer import transient
from shared.messages import ExternalAnswer

NAME = "the Wayback Machine"

LATER_AFTER_S: dict[str, float] = {
    "error:too-many-daily-captures": 24 * 3600,
    "error:user-session-limit": 600,
}
"""SPN2's words that say "not now" with a time: asked again after it."""
TRANSIENT = frozenset(
    {
        "error:too-many-requests", "error:no-browsers-available", "error:service-unavailable",
        "error:celery", "error:internal-server-error", "error:bad-gateway",
        "error:gateway-timeout", "error:browsing-timeout", "error:read-timeout",
        "error:soft-time-limit-exceeded", "error:job-failed", "error:proxy-error",
        "error:bandwidth-limit-exceeded", "error:capture-location-error",
    }
)  # fmt: skip
"""SPN2's errors a later try can get past: asked again with the growing delay. Any other
(`error:blocked-url`, `error:not-found`, `error:no-access`, ...) is final."""


class Wayback:
    """One SPN2 account's submissions."""

    def __init__(
        self, client: httpx.AsyncClient, base: str, access: SecretStr | None,
        secret: SecretStr | None,
    ) -> None:  # fmt: skip
        self.client, self.base = client, base.rstrip("/")
        self._keys = (access, secret)

    def _headers(self) -> dict[str, str]:
        access, secret = self._keys
        assert access is not None and secret is not None
        auth = f"LOW {access.get_secret_value()}:{secret.get_secret_value()}"
        return {"Authorization": auth, "Accept": "application/json"}

    async def submit(self, url: str) -> ExternalAnswer:
        """Ask for a capture of `url`: its job, or why not."""
        if None in self._keys:
            return ExternalAnswer(
                outcome="failed", error="WAYBACK_ACCESS_KEY and WAYBACK_SECRET_KEY are not set"
            )
        response = await self.client.post(
            f"{self.base}/save", data={"url": url}, headers=self._headers()
        )
        body = self._json(response)
        if isinstance(body, ExternalAnswer):
            return body
        if body.get("job_id"):
            return ExternalAnswer(outcome="pending", job_ref=str(body["job_id"]))
        return self._status(body)

    async def poll(self, job_ref: str) -> ExternalAnswer:
        """The status of a job submitted before."""
        response = await self.client.get(
            f"{self.base}/save/status/{job_ref}", headers=self._headers()
        )
        body = self._json(response)
        return body if isinstance(body, ExternalAnswer) else self._status(body, job_ref)

    def _json(self, response: httpx.Response) -> dict[str, Any] | ExternalAnswer:
        answer = transient(NAME, response)
        if answer is not None:
            return answer
        if response.status_code in (401, 403):
            return ExternalAnswer(
                outcome="failed", error=f"{NAME} refused the keys (HTTP {response.status_code})"
            )
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return ExternalAnswer(
                outcome="later", error=f"{NAME} answered no status (HTTP {response.status_code})"
            )
        return body

    def _status(self, body: dict[str, Any], job_ref: str | None = None) -> ExternalAnswer:
        status = body.get("status")
        if status == "success" and body.get("timestamp"):
            stamp = str(body["timestamp"])
            original = body.get("original_url") or body.get("url")
            return ExternalAnswer(
                outcome="archived", snapshot_url=f"{self.base}/web/{stamp}/{original}",
                captured_at=datetime.strptime(stamp[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC),
            )  # fmt: skip
        if status == "pending" and job_ref:
            return ExternalAnswer(outcome="pending", job_ref=job_ref)
        ext = str(body.get("status_ext") or "error:unknown")
        words = (
            f"{NAME} said: {body.get('message') or ext.removeprefix('error:').replace('-', ' ')}"
        )
        if ext in LATER_AFTER_S:
            return ExternalAnswer(outcome="later", retry_after_s=LATER_AFTER_S[ext], error=words)
        if ext in TRANSIENT:
            return ExternalAnswer(outcome="later", error=words)
        return ExternalAnswer(outcome="failed", error=words)
