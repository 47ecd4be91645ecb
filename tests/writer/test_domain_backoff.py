"""A site answering 429 backs off its whole domain: once per answer, as long as it asked."""

from __future__ import annotations

from datetime import timedelta

from services.writer.clock import parse
from shared.fetching.retry_after import MAX_WAIT
from shared.hooks.records import ArchiveResultRecord
from shared.hooks.retry import BACKOFF
from testkit.writer_harness import Harness, done, event, occ, post

FETCH = "on_Snapshot__41_fetch.py"
NAVIGATE = "on_Snapshot__21_navigate.py"


def limited(hook: str, wait: float | None = None) -> ArchiveResultRecord:
    plugin = hook.split("_")[-1].split(".")[0]
    return ArchiveResultRecord(
        status="failed",
        plugin=plugin,
        hook=hook,
        error_code=f"E_{plugin.upper()}_HTTP_429",
        retry_after_s=wait,
    )


def answer_429(h: Harness, job_id: int, wait: float | None = None) -> None:
    """The capture's fetch and its browser both answered 429 (one request each)."""
    job = h.job(job_id)
    h.apply(
        event(job, 0, limited(FETCH, wait)),
        event(job, 1, limited(NAVIGATE, wait)),
        done(job, records=2, retry=[FETCH, NAVIGATE]),
    )


def backoff(h: Harness) -> tuple[timedelta, int]:
    row = h.rows("SELECT until, hits FROM domain_backoff")[0]
    return parse(row["until"]) - h.now, row["hits"]


def two_links(h: Harness) -> None:
    h.apply(post("g1", occ("https://example.org/a"), occ("https://example.org/b")))


def test_one_capture_answered_429_twice_is_one_hit(h: Harness) -> None:
    two_links(h)
    (first,) = h.dispatch(per_domain=1)
    answer_429(h, first.job_id)
    assert backoff(h) == (BACKOFF[0], 1), "the fetch's and the browser's 429 are one answer"
    h.advance(seconds=BACKOFF[0].total_seconds() - 1)
    assert h.dispatch(per_domain=1) == []
    h.advance(seconds=2)
    (second,) = h.dispatch(per_domain=1)  # the site asked again after the wait
    answer_429(h, second.job_id)
    assert backoff(h) == (BACKOFF[1], 2)


def test_a_late_answer_of_a_job_in_flight_does_not_lengthen_the_wait(h: Harness) -> None:
    two_links(h)
    a, b = h.dispatch(per_domain=2)
    answer_429(h, a.job_id)
    h.advance(seconds=30)
    answer_429(h, b.job_id)  # dispatched before the back-off began
    wait, hits = backoff(h)
    assert (wait, hits) == (BACKOFF[0] - timedelta(seconds=30), 1)


def test_a_longer_retry_after_is_kept_and_a_shorter_one_is_not_a_shortcut(h: Harness) -> None:
    two_links(h)
    (first,) = h.dispatch(per_domain=1)
    answer_429(h, first.job_id, wait=3 * 3600)
    assert backoff(h) == (timedelta(hours=3), 1)
    h.advance(hours=3, seconds=1)
    (second,) = h.dispatch(per_domain=1)
    answer_429(h, second.job_id, wait=10)  # 10 s asked, the second hit's wait is longer
    assert backoff(h) == (BACKOFF[1], 2)


def test_a_retry_after_of_a_week_waits_a_day(h: Harness) -> None:
    two_links(h)
    (first,) = h.dispatch(per_domain=1)
    answer_429(h, first.job_id, wait=7 * 86400)
    assert backoff(h) == (MAX_WAIT, 1)
    h.advance(seconds=MAX_WAIT.total_seconds() - 1)
    assert h.dispatch(per_domain=1) == []
    h.advance(seconds=2)
    assert len(h.dispatch(per_domain=1)) == 1


def test_a_longer_wait_asked_by_a_later_answer_of_the_same_capture_is_kept(h: Harness) -> None:
    two_links(h)
    (first,) = h.dispatch(per_domain=1)
    job = h.job(first.job_id)
    h.apply(
        event(job, 0, limited(FETCH)),  # no Retry-After: the first wait
        event(job, 1, limited(NAVIGATE, 7200)),  # the browser's answer asks for two hours
        done(job, records=2, retry=[FETCH, NAVIGATE]),
    )
    assert backoff(h) == (timedelta(hours=2), 1)
