"""Submissions to the public archives through the writer's real apply path, time given by
the harness (never waited for): planned only after our own capture succeeded and only with
WAYBACK_SUBMIT / ARCHIVE_TODAY_SUBMIT on; a job in progress polled in the next round; "not
now" asked again when the service said; a refusal kept in words; our capture untouched."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from services.writer import external_archives
from shared.hooks.records import ArchiveResultRecord
from shared.messages import (
    ExternalAnswer,
    ExternalArchiveJob,
    ExternalArchiveResult,
    TakedownCommand,
)
from testkit.writer_harness import Harness, done, event, occ, post

FETCH = "on_Snapshot__41_fetch.py"
SNAPSHOT = "https://web.archive.test/web/20261129083015/https://example.test/a"


def archive(h: Harness, url: str, ok: bool = True) -> int:
    """Post the link and capture it once (succeeded, or failed for good): its link id."""
    h.apply(post(f"g-{uuid.uuid4().hex}", occ(url)))
    (job,) = h.dispatch()
    status = "succeeded" if ok else "failed"
    record = ArchiveResultRecord(
        status=status, plugin="fetch", hook=FETCH, error_code="not_found" if not ok else None
    )
    row = h.job(job.job_id)
    h.apply(event(row, 0, record), done(row, records=1))
    return job.link_id


def jobs(h: Harness) -> list[ExternalArchiveJob]:
    return external_archives.plan(h.conn, h.now, h.policy.external_retry)


def result(job: ExternalArchiveJob, outcome: str, **fields: Any) -> ExternalArchiveResult:
    answer = ExternalAnswer(outcome=outcome, **fields)  # type: ignore[arg-type]
    return ExternalArchiveResult(
        link_id=job.link_id, service=job.service, round=job.round, worker="host-a:1",
        answer=answer, checked_at=datetime(2026, 1, 1, 12, tzinfo=UTC),
    )  # fmt: skip


def row(h: Harness, link_id: int, service: str) -> dict[str, Any]:
    (r,) = h.rows(
        "SELECT * FROM external_archives WHERE link_id = ? AND service = ?", link_id, service
    )
    return dict(r)


def status(h: Harness, link_id: int) -> str:
    return str(h.one("SELECT status FROM links WHERE id = ?", link_id))


def on(h: Harness, *services: str) -> None:
    h.policy = replace(h.policy, external_services=services, external_retry=timedelta(minutes=5))


def test_with_the_settings_off_nothing_is_submitted(h: Harness) -> None:
    link_id = archive(h, "https://example.test/a")
    assert status(h, link_id) == "archived"
    assert h.rows("SELECT * FROM external_archives") == []
    assert jobs(h) == []


def test_only_an_archived_link_is_submitted_to_each_service_on(h: Harness) -> None:
    on(h, "wayback", "archive_today")
    archive(h, "https://example.test/gone", ok=False)
    link_id = archive(h, "https://example.test/a")
    sent = jobs(h)
    assert [
        (j.link_id, j.service, j.url, j.round, j.job_ref)
        for j in sorted(sent, key=lambda j: j.service)
    ] == [
        (link_id, "archive_today", "https://example.test/a", 1, None),
        (link_id, "wayback", "https://example.test/a", 1, None),
    ]
    assert jobs(h) == [], "a job sent is not sent again before its next try"


def test_in_progress_then_rate_limited_then_archived(h: Harness) -> None:
    on(h, "wayback")
    link_id = archive(h, "https://example.test/a")
    (first,) = jobs(h)
    h.apply(result(first, "pending", job_ref="spn2-0001"))
    assert jobs(h) == []
    h.advance(minutes=5)
    (second,) = jobs(h)
    assert (second.round, second.job_ref) == (2, "spn2-0001"), "polled, not submitted again"
    assert second.poll_until == h.now + timedelta(minutes=5), "half the delay to the next try"
    h.apply(result(second, "later", retry_after_s=3600.0, error="rate limiting (HTTP 429)"))
    assert row(h, link_id, "wayback")["last_error"] == "rate limiting (HTTP 429)"
    h.advance(minutes=59)
    assert jobs(h) == [], "asked again only when the service said"
    h.advance(minutes=1)
    (third,) = jobs(h)
    assert third.job_ref is None
    h.advance(days=1)  # round 3's job is lost or slow: round 4 is sent
    (fourth,) = jobs(h)
    h.apply(result(third, "failed", error="a late answer of round 3"))
    r = row(h, link_id, "wayback")
    assert (r["status"], r["rounds"]) == ("pending", 4), "an old round's answer is ignored"
    assert r["last_error"] == "rate limiting (HTTP 429)"
    h.advance(days=1)
    assert [j.round for j in jobs(h)] == [5]
    when = datetime(2026, 11, 29, 8, 30, 15, tzinfo=UTC)
    # a snapshot is a fact whichever round's job saw it (round 4's, late)
    h.apply(result(fourth, "archived", snapshot_url=SNAPSHOT, captured_at=when))
    r = row(h, link_id, "wayback")
    assert (
        r["status"],
        r["snapshot_url"],
        r["captured_at"],
        r["next_try_at"],
        r["last_error"],
    ) == (
        "archived",
        SNAPSHOT,
        "2026-11-29T08:30:15.000000Z",
        None,
        None,
    )
    assert status(h, link_id) == "archived"


def test_a_refusal_is_kept_in_words_and_our_capture_stays_archived(h: Harness) -> None:
    on(h, "archive_today")
    link_id = archive(h, "https://example.test/a")
    (job,) = jobs(h)
    h.apply(result(job, "failed", error="archive.today gave no snapshot (HTTP 200)"))
    r = row(h, link_id, "archive_today")
    assert (r["status"], r["last_error"], r["next_try_at"]) == (
        "failed",
        "archive.today gave no snapshot (HTTP 200)",
        None,
    )
    assert status(h, link_id) == "archived"
    h.advance(days=30)
    assert jobs(h) == []
    archive(h, "https://example.test/b")  # another link's capture changes nothing of this one
    assert row(h, link_id, "archive_today")["status"] == "failed"


def test_given_up_after_the_last_round(h: Harness) -> None:
    on(h, "wayback")
    link_id = archive(h, "https://example.test/a")
    for _ in range(external_archives.MAX_ROUNDS):
        h.advance(days=30)
        (job,) = jobs(h)
        h.apply(result(job, "later", error="the Wayback Machine did not answer"))
    r = row(h, link_id, "wayback")
    assert (r["status"], r["last_error"]) == (
        "failed",
        f"the Wayback Machine did not answer; given up after {external_archives.MAX_ROUNDS} tries",
    )


def test_a_takedown_holds_the_submissions_and_its_purge_forgets_them(h: Harness) -> None:
    on(h, "wayback")
    link_id = archive(h, "https://example.test/a")
    h.apply(
        TakedownCommand(
            link_id=link_id, request_id="r1", requested_at=h.now, reason="asked", admin="ops"
        )
    )
    assert jobs(h) == []  # a hidden link is not submitted while its takedown can be undone
    h.advance(days=8)
    assert h.purge() == [link_id]
    assert h.rows("SELECT * FROM external_archives") == []
