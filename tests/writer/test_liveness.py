"""Watching the originals through the writer's real apply path, time given by the harness
(never waited for): the schedule, the three answers, the verdict, a change captured again,
restarts and outages."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import timedelta
from typing import Any

from services.writer.liveness.budget import HostBudget
from services.writer.liveness.rules import LivenessRules
from services.writer.liveness.schedule import parse_schedule
from services.writer.liveness.verdicts import platform_of
from shared.hooks.records import ArchiveResultRecord
from shared.messages import CheckCommand, LivenessCheck, TakedownCommand
from testkit.writer_harness import T0, Harness, done, event, occ, post

H = timedelta(hours=1)
D = timedelta(days=1)
FETCH = "on_Snapshot__41_fetch.py"


def archive(h: Harness, *urls: str) -> list[int]:
    """Post the links and capture each once (succeeded): their link ids."""
    h.apply(post(f"g-{uuid.uuid4().hex}", *(occ(u) for u in urls)))
    jobs = h.dispatch()
    ok = ArchiveResultRecord(status="succeeded", plugin="fetch", hook=FETCH)
    for job in jobs:
        row = h.job(job.job_id)
        h.apply(event(row, 0, ok), done(row, records=1))
    return [j.link_id for j in jobs]


def check_now(h: Harness, link_id: int, answer: str, **fields: Any) -> None:
    """Ask for a check of the link now, dispatch it and answer it."""
    h.apply(CheckCommand(link_id=link_id, request_id=uuid.uuid4().hex, requested_at=h.now))
    (check,) = [c for c in h.checks() if c.link_id == link_id]
    h.apply(h.answer(check, answer, **fields))


def verdict(h: Harness, link_id: int) -> tuple[Any, ...]:
    return tuple(
        h.rows(
            "SELECT state, since, reason, tombstone, gone_at FROM liveness_verdicts"
            " WHERE link_id = ?",
            link_id,
        )[0]
    )


def due(h: Harness, link_id: int) -> int:
    return int(h.one("SELECT due FROM liveness_schedule WHERE link_id = ?", link_id))


def ts(delta: timedelta) -> int:
    return int((T0 + delta).timestamp())


def gone404(**more: Any) -> dict[str, Any]:
    return {"status": 404, "reason": "not_found"} | more


def test_an_archived_link_is_checked_at_its_first_age_and_not_before(h: Harness) -> None:
    (link,) = archive(h, "https://example.com/page")
    assert h.checks() == []
    h.advance(minutes=59)
    assert h.checks() == []
    h.advance(minutes=4)  # past 1 h and its jitter (at most 5 %)
    (check,) = h.checks()
    assert (check.link_id, check.seq, check.url) == (link, 1, "https://example.com/page")
    assert h.checks() == [], "a check out is not dispatched again"
    h.apply(h.answer(check, "present", status=200))
    assert verdict(h, link)[:3] == ("present", ts(timedelta(minutes=63)), None)
    assert T0 + D <= h.now.fromtimestamp(due(h, link), h.now.tzinfo) <= T0 + D * 1.05


def test_a_flapping_page_is_never_gone_early(h: Harness) -> None:
    (link,) = archive(h, "https://example.com/flaps")
    for at, answer in [
        (1 * H, "gone"),
        (2 * D, "present"),
        (2 * D + H, "gone"),
        (4 * D, "present"),
    ]:
        h.now = T0 + at
        check_now(h, link, answer, **(gone404() if answer == "gone" else {}))
        assert verdict(h, link)[0] in ("present", "unknown")
    h.now = T0 + 4 * D + H
    check_now(h, link, "gone", **gone404())
    h.now = T0 + 7 * D  # 71 h after the last gone run began: not yet
    check_now(h, link, "gone", **gone404())
    assert verdict(h, link)[0] == "unknown"
    assert verdict(h, link)[2] == "HTTP 404: not yet confirmed"
    h.now = T0 + 7 * D + 2 * H  # 73 h of consecutive gone answers
    check_now(h, link, "gone", **gone404(status=410))
    state, since, reason, tombstone, gone_at = verdict(h, link)
    assert (state, since, reason, tombstone) == ("gone", ts(4 * D + H), "HTTP 410", 0)
    assert gone_at == ts(7 * D + 2 * H)


def test_a_gone_awaiting_confirmation_is_checked_again_when_it_would_be_believed(
    h: Harness,
) -> None:
    (link,) = archive(h, "https://example.com/moved")
    h.now = T0 + 2 * H
    check_now(h, link, "gone", **gone404())
    assert due(h, link) <= ts(2 * H + 3 * D), "the next check confirms (or not) in time"
    h.now = T0 + 3 * D + 2 * H
    (check,) = h.checks()
    h.apply(h.answer(check, "gone", **gone404()))
    assert verdict(h, link)[0] == "gone"


def test_a_week_of_429s_is_unknown_never_gone_and_retried_sooner(h: Harness) -> None:
    (link,) = archive(h, "https://example.com/busy")
    h.now = T0 + 2 * H
    check_now(h, link, "present", status=200)
    gaps = []
    last = h.now
    while h.now < T0 + 8 * D:
        h.now = h.now.fromtimestamp(due(h, link), h.now.tzinfo)
        (check,) = h.checks()
        h.apply(h.answer(check, "unknown", status=429, reason="rate_limited"))
        gaps.append(h.now - last)
        last = h.now
        state, _, reason, _, _ = verdict(h, link)
        assert state == "unknown" and reason == "rate limited (HTTP 429)"
    assert gaps[1:5] == [H, 2 * H, 4 * H, 8 * H], "after an answer that could not tell: sooner"
    assert max(gaps) <= D
    assert h.one("SELECT count(*) FROM liveness_observations WHERE answer = 2") == 0


def test_a_platform_tombstone_is_believed_after_its_shorter_window(h: Harness) -> None:
    (link,) = archive(h, "https://old.reddit.com/r/test/comments/abc1/a_title/")
    removed = {"tombstone": True, "reason": "removed", "words": "removed (moderator)",
               "via": "reddit:thread-json", "status": 200}  # fmt: skip
    h.now = T0 + 2 * H
    check_now(h, link, "gone", **removed)
    assert verdict(h, link)[0] == "unknown"
    assert due(h, link) == ts(3 * H), "checked again when the tombstone would be believed"
    h.now = T0 + 3 * H
    (check,) = h.checks()
    h.apply(h.answer(check, "gone", **removed))
    state, since, reason, tombstone, _ = verdict(h, link)
    assert (state, since, reason, tombstone) == ("gone", ts(2 * H), "removed by a moderator", 1)
    assert h.one("SELECT platform FROM liveness_verdicts WHERE link_id = ?", link) == "reddit"
    h.now = T0 + 5 * D
    check_now(h, link, "present", status=200, via="reddit:thread-json")
    assert verdict(h, link)[:2] == ("present", ts(5 * D)), "one present resets it"
    assert verdict(h, link)[4] is None


def test_a_changed_original_is_captured_again_once(h: Harness) -> None:
    (link,) = archive(h, "https://example.com/edited")
    h.now = T0 + 2 * H
    check_now(h, link, "present", status=200, changed=True)
    queued = h.rows("SELECT * FROM archive_jobs WHERE link_id = ? AND status = 'queued'", link)
    assert [(j["reason"], j["priority"]) for j in queued] == [("changed at source", 0)]
    h.now += H
    check_now(h, link, "present", status=200, changed=True)
    assert h.one("SELECT count(*) FROM archive_jobs WHERE status = 'queued'") == 1
    assert h.one("SELECT edited FROM liveness_verdicts WHERE link_id = ?", link) == 1
    h.now += H
    check_now(h, link, "present", status=304, reason="not_modified", changed=False)
    assert h.one("SELECT edited FROM liveness_verdicts WHERE link_id = ?", link) == 1


def test_a_restart_loses_no_check_and_fires_none_twice(h: Harness) -> None:
    links = archive(h, *(f"https://site{n}.example/p" for n in range(6)))
    h.now = T0 + 2 * H
    first = liveness_plan(h)  # recorded, then the writer dies before publishing
    assert sorted(c.link_id for c in first) == sorted(links)
    restarted = Harness(h.conn, h.policy, h.now)  # a new writer: a fresh budget, same db
    again = restarted.checks()
    assert [(c.link_id, c.seq, c.msg_id()) for c in again] == [
        (c.link_id, c.seq, c.msg_id()) for c in first
    ], "published again with the same number: JetStream drops the duplicate"
    assert restarted.checks() == []
    for c in again[:3]:  # three answered, three lost with their worker
        restarted.apply(restarted.answer(c, "present", status=200))
    restarted.now += timedelta(minutes=16)  # past the deadline (JOB_DEADLINE_SECONDS)
    lost = restarted.checks()
    assert sorted((c.link_id, c.seq) for c in lost) == sorted((c.link_id, 2) for c in again[3:])
    late = restarted.answer(again[3], "gone", **gone404())  # the lost check answers late
    restarted.apply(late)
    assert (
        restarted.one("SELECT state FROM liveness_schedule WHERE link_id = ?", again[3].link_id)
        == 2
    ), "a late answer is evidence, it does not move the check out"
    assert restarted.one("SELECT count(*) FROM liveness_observations") == 4


def liveness_plan(h: Harness) -> list[LivenessCheck]:
    """A dispatcher run whose publishes never happened (the writer died in between)."""
    from services.writer.liveness import dispatch

    return dispatch.plan(h.conn, h.policy.liveness, h.budget, h.now)


def test_checks_due_at_once_after_a_long_outage_are_spread_out(h: Harness) -> None:
    rules = LivenessRules(concurrency=20, per_domain=20, host_per_hour=10)
    h.policy = replace(h.policy, liveness=rules)
    h.budget = HostBudget(rules.host_per_hour)
    busy = archive(h, *(f"https://big.example/p{n}" for n in range(40)))
    others = archive(h, *(f"https://s{n}.example/p" for n in range(5)))
    h.now = T0 + 30 * D  # down for a month: every link overdue
    sent: list[LivenessCheck] = []
    for _ in range(5):
        batch = h.checks()
        for c in batch:
            h.apply(h.answer(c, "present", status=200))
        sent += batch
    assert len([c for c in sent if c.link_id in busy]) == 10, "the domain's hourly budget"
    assert {c.link_id for c in sent} >= set(others), "other domains are not held up"
    waiting = [due(h, link) for link in busy if link not in {c.link_id for c in sent}]
    now = int(h.now.timestamp())
    assert all(now + 3000 <= t <= now + 2 * 3600 for t in waiting), "moved on past the hour"
    assert len(set(waiting)) > 20, "and spread over it, not due together again"
    checked = [due(h, c.link_id) for c in sent]
    assert len(set(checked)) == len(checked), "their next checks are spread by their jitter"


def test_at_most_the_concurrency_and_one_check_per_domain_are_out(h: Harness) -> None:
    h.policy = replace(h.policy, liveness=LivenessRules(concurrency=3, per_domain=1))
    archive(h, *(f"https://one.example/p{n}" for n in range(4)))
    archive(h, *(f"https://d{n}.example/p" for n in range(4)))
    h.now = T0 + 2 * H
    out = h.checks()
    assert len(out) == 3
    assert sum(1 for c in out if "one.example" in c.url) <= 1


def test_a_check_asked_for_runs_at_once_unless_one_is_out(h: Harness) -> None:
    (link,) = archive(h, "https://example.com/asked")
    h.apply(CheckCommand(link_id=link, request_id="r1", requested_at=h.now))
    (check,) = h.checks()
    h.apply(CheckCommand(link_id=link, request_id="r2", requested_at=h.now))
    assert h.checks() == []
    h.apply(h.answer(check, "present", status=200))
    assert due(h, link) > int(h.now.timestamp())


def test_checks_are_off_when_disabled_but_the_schedule_is_kept(h: Harness) -> None:
    h.policy = replace(h.policy, liveness=LivenessRules(enabled=False))
    (link,) = archive(h, "https://example.com/off")
    h.now = T0 + 10 * D
    assert h.checks() == []
    assert due(h, link) <= int(h.now.timestamp())


def test_a_schedule_of_its_own(h: Harness) -> None:
    h.policy = replace(h.policy, liveness=LivenessRules(ages=parse_schedule("10m,2h")))
    (link,) = archive(h, "https://example.com/custom")
    assert ts(timedelta(minutes=10)) <= due(h, link) <= ts(timedelta(minutes=10.5))


def test_a_taken_down_link_is_no_longer_checked(h: Harness) -> None:
    (link,) = archive(h, "https://example.com/down")
    h.apply(TakedownCommand(link_id=link, reason="asked", admin="a", request_id="t",
                            requested_at=h.now))  # fmt: skip
    h.now = T0 + 2 * H
    assert h.checks() == []
    assert h.one("SELECT count(*) FROM liveness_schedule") == 1  # kept for an undo
    h.now = T0 + timedelta(days=8)
    h.purge()  # its undo window ended
    assert h.checks() == []
    assert h.one("SELECT count(*) FROM liveness_schedule") == 0


def test_the_check_carries_what_the_newest_capture_kept(h: Harness) -> None:
    from shared.hooks.records import ArtifactRecord

    h.apply(post("g1", occ("https://example.com/kept")))
    (job,) = h.dispatch()
    row = h.job(job.job_id)

    def art(seq: int, kind: str, path: str, sha: str) -> Any:
        key = f"archives/{job.link_id}/{job.snapshot_id}/fetch/{path}"
        rec = ArtifactRecord(plugin="fetch", kind=kind, path=path, s3_key=key,
                             content_type="text/html", bytes=5, sha256=sha)  # fmt: skip
        return event(row, seq, rec)

    ok = ArchiveResultRecord(status="succeeded", plugin="fetch", hook=FETCH)
    h.apply(art(0, "raw_response", "body.html", "a" * 64), art(1, "headers", "headers.json",
            "b" * 64), event(row, 2, ok), done(row, records=3))  # fmt: skip
    h.now = T0 + 2 * H
    (check,) = h.checks()
    assert check.snapshot_id == job.snapshot_id and check.raw_sha256 == "a" * 64
    assert check.raw_key is not None and check.raw_key.endswith("/fetch/body.html")
    assert check.headers_key is not None and check.headers_key.endswith("/fetch/headers.json")
    assert check.post_sha256 is None


def test_two_answers_within_one_second_are_one_observation_the_later(h: Harness) -> None:
    (link,) = archive(h, "https://example.com/twice")
    h.now = T0 + 2 * H
    check_now(h, link, "present", status=200, changed=False)
    h.now += timedelta(milliseconds=400)
    check_now(h, link, "present", status=200, changed=True)
    assert h.tuples("SELECT changed FROM liveness_observations") == [(1,)]
    assert h.one("SELECT reason FROM archive_jobs WHERE status = 'queued'") == "changed at source"


def test_a_dispatcher_run_never_walks_every_watched_link(h: Harness) -> None:
    """Each of a dispatcher run's queries reads the schedule by an index range (the due
    checks, the few out), never a scan of every watched link: at 1,000,000 links a scan
    made each run take a second of the writer's time (docs/benchmarks.md)."""
    archive(h, *(f"https://s{n}.example/p" for n in range(6)))
    h.now = T0 + 2 * H
    h.checks()  # some checks out
    statements: list[str] = []
    h.conn.set_trace_callback(statements.append)
    try:
        liveness_plan(h)
    finally:
        h.conn.set_trace_callback(None)
    reads = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert any("liveness_schedule" in s for s in reads)
    for sql in reads:
        if "liveness_schedule" not in sql:
            continue
        plan = " | ".join(row[3] for row in h.conn.execute("EXPLAIN QUERY PLAN " + sql))
        assert "SCAN s" not in plan and "SCAN liveness_schedule" not in plan, (sql, plan)


def test_a_verdict_names_the_platform_that_answered() -> None:
    """Mastodon's links are known by the archiver's MASTODON_INSTANCES, not by their URL: the
    check's `via` names the platform; other links are named by their URL, as before."""
    status = "https://mastodon.social/@ada/113000000000000001"
    assert platform_of(status, "mastodon:status-api") == "mastodon"
    assert platform_of(status, "http") == "web"
    assert platform_of("https://x.com/ada/status/1", "http") == "x"
    assert platform_of("https://x.com/ada/status/1", "x:syndication") == "x"
