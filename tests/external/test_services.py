"""Each public archive's protocol against its stand-in (testkit/public_archives.py, real HTTP
on 127.0.0.1): a snapshot after one pending poll, 429 with its Retry-After, "too many
captures" with SPN2's time, a refusal in the service's words; the polling bound."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from pydantic import SecretStr

from shared.capture.submitter import SubmitConfig, Submitter
from shared.external.archive_today import ArchiveToday
from shared.external.settings import ExternalServiceSettings
from shared.external.wayback import Wayback
from shared.messages import ExternalAnswer, ExternalArchiveJob, ExternalService
from shared.subjects import EXTERNAL_JOBS
from testkit.public_archives import PublicArchive, public_archive

ACCESS, SECRET = "fictional-access-3c1d", "fictional-secret-88af"
PAGE = "http://example.test/some/page.html"
SNAPSHOT_TIME = datetime(2026, 11, 29, 8, 30, 15, tzinfo=UTC)


@pytest.fixture
def spn2() -> Iterator[PublicArchive]:
    with public_archive("wayback") as s:
        yield s


@pytest.fixture
def archive_today() -> Iterator[PublicArchive]:
    with public_archive("archive_today") as s:
        yield s


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=5) as c:
        yield c


def submitter(client: httpx.AsyncClient, spn2: str, today: str) -> Submitter:
    services = ExternalServiceSettings(
        wayback_access_key=SecretStr(ACCESS), wayback_secret_key=SecretStr(SECRET),
        wayback_url=spn2, archive_today_url=today, external_archive_poll_seconds=0.01,
    )  # fmt: skip
    return Submitter(SubmitConfig(EXTERNAL_JOBS, "w1", services, "test-agent"), client)


def job(
    service: ExternalService, job_ref: str | None = None, poll_s: float = 60
) -> ExternalArchiveJob:
    """A job whose polling may last `poll_s` (0: no poll, the submission's answer only)."""
    return ExternalArchiveJob(
        link_id=1, service=service, url=PAGE, job_ref=job_ref, round=1,
        poll_until=datetime.now(UTC) + timedelta(seconds=poll_s),
    )  # fmt: skip


async def test_wayback_snapshot_after_a_pending_poll(
    spn2: PublicArchive, client: httpx.AsyncClient
) -> None:
    answer = await submitter(client, spn2.base, "http://unused.test").ask(job("wayback"))
    assert answer == ExternalAnswer(
        outcome="archived", snapshot_url=f"{spn2.base}/web/20261129083015/{PAGE}",
        captured_at=SNAPSHOT_TIME,
    )  # fmt: skip
    methods = [(r.method, r.path.split("/spn2-")[0]) for r in spn2.requests]
    assert methods == [("POST", "/save"), ("GET", "/save/status"), ("GET", "/save/status")]
    assert {r.authorization for r in spn2.requests} == {f"LOW {ACCESS}:{SECRET}"}


async def test_wayback_rate_limit_daily_limit_and_refusal(
    spn2: PublicArchive, client: httpx.AsyncClient
) -> None:
    wb = Wayback(client, spn2.base, SecretStr(ACCESS), SecretStr(SECRET))
    spn2.script["/page.html"] = ["429", "daily", "blocked"]
    limited = await wb.submit(PAGE)
    assert (limited.outcome, limited.retry_after_s) == ("later", 1.0)
    assert limited.error == "the Wayback Machine is rate limiting (HTTP 429); it asks to wait 1 s"
    daily = await wb.submit(PAGE)
    assert (daily.outcome, daily.retry_after_s) == ("later", 24 * 3600)
    assert daily.error == (
        "the Wayback Machine said: This URL has been already captured 10 times today."
    )
    pending = await wb.submit(PAGE)
    assert pending.outcome == "pending" and pending.job_ref
    assert (await wb.poll(pending.job_ref)).outcome == "pending"
    refused = await wb.poll(pending.job_ref)
    assert refused == ExternalAnswer(
        outcome="failed",
        error="the Wayback Machine said: This URL is in the Save Page Now service block list.",
    )


async def test_wayback_without_keys_asks_nothing(
    spn2: PublicArchive, client: httpx.AsyncClient
) -> None:
    answer = await Wayback(client, spn2.base, None, None).submit(PAGE)
    assert answer.outcome == "failed"
    assert answer.error == "WAYBACK_ACCESS_KEY and WAYBACK_SECRET_KEY are not set"
    assert spn2.requests == []


async def test_polling_is_bounded_and_the_next_round_polls_the_same_job(
    spn2: PublicArchive, client: httpx.AsyncClient
) -> None:
    sub = submitter(client, spn2.base, "http://unused.test")
    first = await sub.ask(job("wayback", poll_s=0))
    assert first.outcome == "pending" and first.job_ref
    again = await sub.ask(job("wayback", first.job_ref, poll_s=0))
    assert again.outcome == "pending"
    done = await sub.ask(job("wayback", first.job_ref, poll_s=0))
    assert done.outcome == "archived"
    assert len(spn2.submissions()) == 1, "a job in progress is polled, not submitted again"


async def test_archive_today_snapshot_after_its_work_in_progress(
    archive_today: PublicArchive, client: httpx.AsyncClient
) -> None:
    answer = await submitter(client, "http://unused.test", archive_today.base).ask(
        job("archive_today")
    )
    assert answer == ExternalAnswer(
        outcome="archived", snapshot_url=f"{archive_today.base}/F0001x", captured_at=SNAPSHOT_TIME
    )
    paths = [(r.method, r.path) for r in archive_today.requests]
    assert paths == [("GET", "/"), ("POST", "/submit/"), ("GET", "/wip/F0001x"),
                     ("GET", "/wip/F0001x")]  # fmt: skip
    assert archive_today.requests[1].form == {"url": PAGE, "submitid": "fictional-submitid-7f3a"}


async def test_archive_today_rate_limit_and_no_snapshot(
    archive_today: PublicArchive, client: httpx.AsyncClient
) -> None:
    at = ArchiveToday(client, archive_today.base)
    archive_today.script["/page.html"] = ["429", "daily", "blocked"]
    limited = await at.submit(PAGE)
    assert (limited.outcome, limited.retry_after_s) == ("later", 1.0)
    no_time = await at.submit(PAGE)
    assert (no_time.outcome, no_time.retry_after_s) == ("later", None)
    assert no_time.error == "archive.today is rate limiting (HTTP 429)"
    assert await at.submit(PAGE) == ExternalAnswer(
        outcome="failed", error="archive.today gave no snapshot (HTTP 200)"
    )


async def test_a_service_that_is_not_there_is_asked_again(client: httpx.AsyncClient) -> None:
    with public_archive("wayback") as gone:
        base = gone.base
    answer = await submitter(client, base, base).ask(job("archive_today"))
    assert answer == ExternalAnswer(outcome="later", error="archive.today did not answer")
