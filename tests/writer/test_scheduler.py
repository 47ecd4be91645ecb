"""The scheduler: limits across all workers, deadlines, publish-after-record."""

from __future__ import annotations

from dataclasses import replace

from services.writer import scheduler
from services.writer.clock import iso
from services.writer.scheduler import Limits
from shared.messages import SubmitCommand
from shared.subjects import JOB_CAPTURE
from testkit.writer_harness import T0, Harness, done, occ, post


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
