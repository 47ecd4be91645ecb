"""Submit and re-archive requests (rules documented in services/writer/job_policy.py)."""

from __future__ import annotations

from datetime import timedelta

from services.writer.clock import iso
from services.writer.job_policy import MANUAL_PRIORITY
from shared.messages import RearchiveCommand, SubmitCommand
from testkit.writer_harness import T0, Harness, done, occ, post, retry_waiting


def submit(url: str, rid: str = "r1") -> SubmitCommand:
    return SubmitCommand(url=url, request_id=rid, requested_at=T0)


def rearchive(link_id: int, rid: str = "a1") -> RearchiveCommand:
    return RearchiveCommand(link_id=link_id, request_id=rid, requested_at=T0)


def test_submit_bypasses_the_domain_policy_with_high_priority(h: Harness) -> None:
    h.apply(submit("https://blog.example/post?utm_source=x#frag"))
    link = h.rows("SELECT * FROM links")[0]
    assert link["canonical_url"] == "https://blog.example/post"
    (job,) = h.jobs()
    assert (job["status"], job["priority"]) == ("queued", MANUAL_PRIORITY)
    assert h.tuples("SELECT request_id, decision, link_id, job_id FROM submissions") == [
        ("r1", "queued", 1, 1)
    ]


def test_submit_never_bypasses_the_exclude_list(h: Harness) -> None:
    h.apply(submit("https://web.archive.org/web/2020/https://x.com/a", "r9"))
    assert h.one("SELECT count(*) FROM links") == 0 and h.jobs() == []
    assert h.tuples("SELECT decision, reason, link_id FROM submissions") == [
        ("rejected", "excluded:web.archive.org", None)
    ]


def test_submit_respects_the_cache_window_and_running_jobs(h: Harness) -> None:
    h.apply(submit("https://blog.example/post"))
    h.apply(submit("https://blog.example/post", "r2"))
    assert h.jobs()[-1]["status"] == "skipped_cached"
    h.dispatch()
    h.apply(done(h.job(1)))
    h.advance(minutes=30)
    h.apply(submit("https://blog.example/post", "r3"))
    assert h.jobs()[-1]["status"] == "skipped_cached"
    h.advance(minutes=31)
    h.apply(submit("https://blog.example/post", "r4"))
    assert h.jobs()[-1]["status"] == "queued"


def test_a_rejected_submission_is_recorded_without_a_link(h: Harness) -> None:
    h.apply(submit("javascript:alert(1)"))
    assert h.one("SELECT count(*) FROM links") == 0
    assert h.tuples("SELECT decision, reason FROM submissions") == [
        ("rejected", "unsupported-scheme:javascript")
    ]


def test_rearchive_ignores_the_cache_window_but_not_a_job_in_flight(h: Harness) -> None:
    h.apply(post("g1", occ("https://x.com/u/status/1")))
    h.apply(rearchive(1))
    assert h.jobs()[-1]["status"] == "skipped_cached"
    h.dispatch()
    h.apply(done(h.job(1)))
    h.advance(minutes=1)
    h.apply(rearchive(1, "a2"))
    job = h.jobs()[-1]
    assert (job["status"], job["priority"]) == ("queued", MANUAL_PRIORITY)
    assert job["snapshot_id"] != h.job(1)["snapshot_id"]


def test_rearchive_of_an_unknown_link(h: Harness) -> None:
    h.apply(rearchive(42))
    assert h.jobs() == []
    assert h.tuples("SELECT decision, reason FROM submissions") == [("rejected", "unknown link")]


def test_a_request_is_decided_once_even_after_its_message_id_was_pruned(h: Harness) -> None:
    h.apply(submit("https://blog.example/post"))
    h.conn.execute("DELETE FROM processed_messages")
    h.advance(hours=2)
    h.apply(submit("https://blog.example/post"))
    assert len(h.jobs()) == 1


def waiting_retry(h: Harness) -> None:
    """Link 1's capture failed with a 503 and its retry (job 1) waits for its time."""
    job = retry_waiting(h, "https://blog.example/post")
    assert job["status"] == "queued" and job["not_before"] > iso(h.now)
    h.advance(minutes=1)


def test_rearchive_of_a_link_whose_retry_waits_makes_it_due_now(h: Harness) -> None:
    """ "Archive again" on a failed link did nothing until its retry's time (up to 12 h):
    the queued retry is what a new capture would be, so it is made due now."""
    waiting_retry(h)
    h.apply(rearchive(1))
    (job,) = h.jobs()
    assert (job["id"], job["not_before"], job["priority"]) == (1, iso(h.now), MANUAL_PRIORITY)
    assert h.tuples("SELECT decision, job_id FROM submissions") == [("queued", 1)]
    assert [j.job_id for j in h.dispatch()] == [1]
    h.apply(rearchive(1, "a2"))  # now running: nothing more to do
    assert h.jobs()[-1]["status"] == "skipped_cached"


def test_submitting_the_url_of_a_link_whose_retry_waits_makes_it_due_now(h: Harness) -> None:
    waiting_retry(h)
    h.apply(submit("https://blog.example/post"))
    assert [j["id"] for j in h.jobs()] == [1]
    assert h.job(1)["not_before"] == iso(h.now)


def test_a_waiting_retry_stays_behind_its_domains_back_off(h: Harness) -> None:
    """Asked for now, but the site asked us to wait: the back-off still holds."""
    waiting_retry(h)
    h.conn.execute(
        "INSERT INTO domain_backoff (domain, until, reason, hits, updated_at)"
        " VALUES ('blog.example', ?, 'E_FETCH_HTTP_429 (link 1)', 1, ?)",
        (iso(h.now + timedelta(minutes=5)), iso(h.now)),
    )
    h.apply(rearchive(1))
    assert h.dispatch() == []
    (reason,) = h.tuples("SELECT reason FROM submissions")[0]
    assert "blog.example asked us to slow down: not before" in reason
    h.apply(rearchive(1, "a2"))  # asked again: its job is queued already, and still waits
    (again,) = h.tuples("SELECT reason FROM submissions WHERE request_id = 'a2'")[0]
    assert again.startswith("in flight: job 1 (queued, not started)")
    assert "blog.example asked us to slow down" in again
    h.advance(minutes=6)
    assert [j.job_id for j in h.dispatch()] == [1]
