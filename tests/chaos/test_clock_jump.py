"""The wall clock jumps (NTP step, VM resume) under the writer. The writer reads the clock
once per batch and per scheduler tick (services/writer/clock.py `utcnow`, handed to every
apply function as `now`), so a jump is a test input: jobs still end, nothing doubles."""

from __future__ import annotations

from datetime import timedelta

from shared.hooks.records import ArchiveResultRecord
from testkit.chaos import record
from testkit.writer_harness import T0, Harness, done, event, occ, post

N = 10


def finish(h: Harness, job_id: int) -> None:
    job = h.job(job_id)
    ok = ArchiveResultRecord(status="succeeded", plugin="fetch", hook="on_Snapshot__41_fetch.py")
    h.apply(event(job, 0, ok), done(job, records=1))


def test_jobs_end_and_nothing_doubles_across_clock_jumps(h: Harness) -> None:
    h.apply(*(post(f"g{i}", occ(f"https://x.com/u/status/{i}")) for i in range(N)))
    first = h.dispatch()
    assert len(first) == N

    h.advance(hours=-1)  # the clock steps back an hour
    for job in first[: N // 2]:
        finish(h, job.job_id)
    h.apply(post("g-late", occ("https://x.com/u/status/0")))  # seen again "before" its capture
    assert h.dispatch() == [], "nothing is dispatched twice because the clock went back"

    h.advance(days=1, hours=1)  # and then forward a day: past every deadline
    again = h.dispatch()
    assert sorted(j.job_id for j in again) == sorted(j.job_id for j in first[N // 2 :])
    assert all(j.attempt == 2 for j in again), "a silent job is re-dispatched as a new attempt"
    for job in first[N // 2 :]:  # the first attempts' late reports are ignored ...
        h.apply(done(h.job(job.job_id), attempt=1))
    assert len(h.jobs("running")) == N - N // 2
    for job in again:  # ... the second attempts' count
        finish(h, job.job_id)

    statuses = h.tuples("SELECT status, count(*) FROM archive_jobs GROUP BY status")
    per_link = h.tuples(
        "SELECT link_id, count(*) FROM archive_jobs WHERE status IN ('queued', 'running',"
        " 'succeeded', 'failed') GROUP BY link_id HAVING count(*) > 1"
    )
    backwards = h.one(
        "SELECT count(*) FROM links WHERE last_archived_at IS NULL OR last_archived_at < ?",
        (T0 - timedelta(hours=2)).isoformat(),
    )
    record(
        "clock_jump",
        {"jumps": ["-1h", "+1d1h"], "jobs": dict(statuses), "duplicated_jobs": len(per_link)},
    )
    assert dict(statuses) == {"succeeded": N, "skipped_cached": 1}
    assert per_link == []
    assert backwards == 0
