"""The scheduler: limits across all workers, deadlines, publish-after-record."""

from __future__ import annotations

from dataclasses import replace

from services.writer import scheduler, transitions
from services.writer.clock import iso
from services.writer.scheduler import Limits
from shared.hooks.records import ArchiveResultRecord
from shared.messages import SubmitCommand
from shared.subjects import JOB_CAPTURE
from testkit.writer_harness import T0, Harness, done, event, occ, post, released


def links(h: Harness, *urls: str) -> None:
    h.apply(post("g-" + "-".join(urls), *(occ(u) for u in urls)))


def test_global_and_per_domain_limits(h: Harness) -> None:
    links(
        h,
        "https://old.reddit.com/r/a/comments/1/",
        "https://www.reddit.com/r/a/comments/2/",
        "https://x.com/a/status/1",
        "https://x.com/a/status/2",
        "https://www.tiktok.com/@a/video/1",
        "https://youtu.be/abcdefghijk",
        "https://bsky.app/profile/a",
    )
    first = h.dispatch(concurrency=3, per_domain=1)
    # old.reddit.com and www.reddit.com share reddit.com: one of them only.
    assert [j.url for j in first] == [
        "https://old.reddit.com/r/a/comments/1/",
        "https://x.com/a/status/1",
        "https://www.tiktok.com/@a/video/1",
    ]
    assert h.dispatch(concurrency=3, per_domain=1) == []  # the global limit is reached
    h.apply(done(h.job(first[0].job_id)))
    (nxt,) = h.dispatch(concurrency=3, per_domain=1)
    # reddit.com is free again: its next job (oldest first) goes before youtube's.
    assert nxt.url == "https://old.reddit.com/r/a/comments/2/"
    assert len(h.jobs("running")) == 3


def test_priority_first(h: Harness) -> None:
    links(h, "https://x.com/a/status/1")
    h.apply(SubmitCommand(url="https://blog.example/x", request_id="r", requested_at=T0))
    (first,) = h.dispatch(concurrency=1)
    assert first.url == "https://blog.example/x"


def test_dispatch_is_recorded_before_publish_and_republished_until_stored(h: Harness) -> None:
    links(h, "https://x.com/a/status/1")
    plans = scheduler.plan(h.conn, h.policy, Limits(), h.now)
    assert [(p.subject, p.job.attempt) for p in plans] == [(JOB_CAPTURE, 1)]
    job = h.job(1)
    assert (job["status"], job["attempts"], job["dispatched_at"], job["published_at"]) == (
        "running",
        1,
        iso(h.now),
        None,
    )
    assert job["deadline"] == iso(h.now + h.policy.job_deadline)
    # Publishing failed (or the writer died): the next tick offers the same message again.
    again = scheduler.plan(h.conn, h.policy, Limits(), h.now)
    assert [p.job for p in again] == [p.job for p in plans]
    assert again[0].job.msg_id() == "job:1:1"
    scheduler.mark_published(h.conn, [again[0].job], h.now)
    assert scheduler.plan(h.conn, h.policy, Limits(), h.now) == []


def test_a_silent_job_is_dispatched_again_then_failed(h: Harness) -> None:
    h.policy = replace(h.policy, max_attempts=2)
    links(h, "https://x.com/a/status/1")
    h.dispatch()
    h.now += h.policy.job_deadline
    assert h.dispatch() == []  # not past the deadline yet
    h.advance(seconds=1)
    (again,) = h.dispatch()
    assert again.attempt == 2 and again.msg_id() == "job:1:2"
    h.now += h.policy.job_deadline
    h.advance(seconds=1)
    assert h.dispatch() == []
    job = h.job(1)
    assert job["status"] == "failed" and "deadline" in job["last_error"]


def test_an_unsupported_scheme_fails_without_dispatch(h: Harness) -> None:
    links(h, "https://x.com/a/status/1")
    h.conn.execute("UPDATE links SET canonical_url = 'ftp://x.com/a'")
    assert h.dispatch() == []
    assert h.job(1)["status"] == "failed"
    assert h.job(1)["last_error"] == "unsupported URL scheme"


def test_a_job_done_with_its_host_frees_the_domain_slot_not_the_global_one(h: Harness) -> None:
    links(h, "https://blog.example/1", "https://blog.example/2", "https://blog.example/3")
    (first,) = h.dispatch(concurrency=2, per_domain=1)
    assert h.dispatch(concurrency=2, per_domain=1) == []
    h.apply(released(h.job(first.job_id)))
    (second,) = h.dispatch(concurrency=2, per_domain=1)
    assert second.url == "https://blog.example/2"
    # both still run (post-processing, uploads): the global limit counts them both
    h.apply(released(h.job(second.job_id)))
    assert h.dispatch(concurrency=2, per_domain=1) == []
    h.apply(done(h.job(first.job_id)))
    assert [j.url for j in h.dispatch(concurrency=2, per_domain=1)] == ["https://blog.example/3"]


def test_a_release_is_applied_once_and_only_for_its_attempt(h: Harness) -> None:
    links(h, "https://blog.example/1", "https://blog.example/2")
    (first,) = h.dispatch(per_domain=1)
    job = h.job(first.job_id)
    h.apply(released(job, attempt=0))  # an older attempt's late release: nothing
    assert h.job(first.job_id)["host_released_at"] is None
    assert h.dispatch(per_domain=1) == []
    result = h.apply(released(job), released(job))  # redelivered: one row, one id
    assert len(result.applied) == 1 and len(result.duplicates) == 1
    assert h.job(first.job_id)["host_released_run"] == 1
    assert len(h.dispatch(per_domain=1)) == 1


def test_a_redelivered_run_holds_the_host_again_until_it_releases(h: Harness) -> None:
    links(h, "https://blog.example/1", "https://blog.example/2", "https://blog.example/3")
    (first,) = h.dispatch(per_domain=1)
    h.apply(released(h.job(first.job_id)))
    (second,) = h.dispatch(per_domain=1)
    # the first job's message comes back (its worker nak'ed: S3 was down): run 2 starts over
    queued = ArchiveResultRecord(status="queued", plugin="navigate", hook="h.py")
    h.apply(event(h.job(first.job_id), 0, queued, run=2))
    assert h.job(first.job_id)["host_released_at"] is None
    h.apply(released(h.job(second.job_id)))
    assert h.dispatch(per_domain=1) == []  # run 2 of the first job talks to the host
    # a release of run 1 applied late (it cannot come as a message: its id was applied)
    transitions.release_host(h.conn, first.job_id, 1, 1, iso(h.now))
    assert h.dispatch(per_domain=1) == []
    h.apply(released(h.job(first.job_id), run=2))
    assert [j.url for j in h.dispatch(per_domain=1)] == ["https://blog.example/3"]


def test_a_released_job_past_its_deadline_is_dispatched_again_holding_its_host(
    h: Harness,
) -> None:
    """A worker that died after releasing the host: the job's deadline passes as today and
    its next attempt talks to the host again (the release was its attempt's only)."""
    links(h, "https://blog.example/1", "https://blog.example/2")
    (first,) = h.dispatch(concurrency=1, per_domain=1)
    h.apply(released(h.job(first.job_id)))
    assert h.dispatch(concurrency=1, per_domain=1) == []  # the global slot is still held
    h.now += h.policy.job_deadline
    h.advance(seconds=1)
    (again,) = h.dispatch(concurrency=1, per_domain=1)
    assert (again.job_id, again.attempt) == (first.job_id, 2)
    assert h.job(first.job_id)["host_released_at"] is None
