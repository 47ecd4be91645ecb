"""archive.today: its front page holds a `submitid` token; `POST <ARCHIVE_TODAY_URL>/submit/`
with the URL and that token answers with the snapshot's address (`/<id>`, in a Location or
Refresh header), or with its work-in-progress page (`/wip/<id>`) while it captures; the
work-in-progress page redirects to the snapshot once done."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from urllib.parse import urljoin

import httpx

from shared.external.answer import transient
from shared.links.urlparts import supported_scheme
from shared.messages import ExternalAnswer

NAME = "archive.today"
_SUBMITID = re.compile(
    rb'name="submitid"[^>]*?value="([^"]+)"|value="([^"]+)"[^>]*?name="submitid"'
)
_REFRESH_URL = re.compile(r"url=(\S+)", re.IGNORECASE)


class ArchiveToday:
    """Submissions to one archive.today mirror."""

    def __init__(self, client: httpx.AsyncClient, base: str) -> None:
        self.client, self.base = client, base.rstrip("/")

    async def submit(self, url: str) -> ExternalAnswer:
        """Ask for a capture of `url`: the snapshot, its work in progress, or why not."""
        front = await self.client.get(f"{self.base}/")
        answer = transient(NAME, front)
        if answer is not None:
            return answer
        found = _SUBMITID.search(front.content)
        form = {"url": url}
        if found:
            form["submitid"] = (found.group(1) or found.group(2)).decode("ascii", "replace")
        return self._read(await self.client.post(f"{self.base}/submit/", data=form))

    async def poll(self, job_ref: str) -> ExternalAnswer:
        """The work in progress at `job_ref`: still there, or the snapshot it became."""
        response = await self.client.get(job_ref)
        if response.status_code == 200 and _target(response) is None:
            return ExternalAnswer(outcome="pending", job_ref=job_ref)
        return self._read(response)

    def _read(self, response: httpx.Response) -> ExternalAnswer:
        answer = transient(NAME, response)
        if answer is not None:
            return answer
        target = _target(response)
        if target is None:
            return ExternalAnswer(
                outcome="failed", error=f"{NAME} gave no snapshot (HTTP {response.status_code})"
            )
        target = urljoin(str(response.url), target)
        if not supported_scheme(target):
            return ExternalAnswer(
                outcome="failed", error=f"{NAME} answered an address that is not a web page"
            )
        if "/wip/" in target:
            return ExternalAnswer(outcome="pending", job_ref=target)
        return ExternalAnswer(
            outcome="archived", snapshot_url=target, captured_at=_memento(response)
        )


def _target(response: httpx.Response) -> str | None:
    """Where the answer sends the reader: its Location (a redirect) or its Refresh URL."""
    if response.is_redirect and response.headers.get("location"):
        return response.headers["location"]
    found = _REFRESH_URL.search(response.headers.get("refresh", ""))
    return found.group(1).strip("'\"") if found else None


def _memento(response: httpx.Response) -> datetime:
    """The snapshot's time: its Memento-Datetime when the answer gives it, else now."""
    value = response.headers.get("memento-datetime")
    if value:
        try:
            return parsedate_to_datetime(value).astimezone(UTC)
        except (TypeError, ValueError):
            pass
    return datetime.now(UTC)
