"""A timestamp authority's final answer (refused, or a token that does not verify) is kept
with its reason and never asked for again; any other failure keeps its backoff."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from services.writer.evidence_store import plan_timestamps
from shared.hooks.records import ArchiveResultRecord
from shared.messages import EvidenceReport, TimestampOutcome, TimestampResult
from testkit.writer_harness import Harness, done, event
from tests.writer.scenario import capture_messages, evidence_messages, feed_messages

REFUSING, FORGING, DOWN = (
    "http://127.0.0.9/refuses",
    "http://127.0.0.9/forges",
    "http://127.0.0.9/down",
)
NAV = "on_Snapshot__21_navigate.py"


def test_final_answers_are_not_asked_again(h: Harness) -> None:
    h.policy = replace(h.policy, timestamp_authorities=(REFUSING, FORGING, DOWN))
    h.apply(*feed_messages())
    h.dispatch()
    job = dict(h.rows("SELECT * FROM archive_jobs WHERE status = 'running' ORDER BY id")[0])
    report = evidence_messages(job)[0]
    assert isinstance(report, EvidenceReport)
    h.apply(*capture_messages(job), report)
    (ask,) = plan_timestamps(h.conn, h.now, timedelta(minutes=1))
    assert sorted(ask.authorities) == sorted((REFUSING, FORGING, DOWN))

    outcomes = [
        TimestampOutcome(authority=REFUSING, granted=False, final="refused",
                         error="refused by the authority: rejection; bad request"),
        TimestampOutcome(authority=FORGING, granted=False, final="invalid",
                         error="token does not verify: Mismatch between messages"),
        TimestampOutcome(authority=DOWN, granted=False, error="HTTP 500"),
    ]  # fmt: skip
    h.apply(TimestampResult(
        link_id=ask.link_id, snapshot_id=ask.snapshot_id, fingerprint=ask.fingerprint,
        round=ask.round, worker="host-a:1", outcomes=outcomes, verdict="verified",
        detail="0 tokens granted", checked_at=h.now,
    ))  # fmt: skip
    rows = {r["authority"]: r for r in h.rows("SELECT * FROM evidence_timestamps")}
    assert (rows[REFUSING]["status"], rows[REFUSING]["next_try_at"]) == ("refused", None)
    assert rows[REFUSING]["last_error"] == "refused by the authority: rejection; bad request"
    assert (rows[FORGING]["status"], rows[FORGING]["next_try_at"]) == ("invalid", None)
    assert "Mismatch" in rows[FORGING]["last_error"]
    assert rows[DOWN]["status"] == "pending" and rows[DOWN]["next_try_at"] is not None
    # the worker's verdict on the files stands: a timestamp round says nothing of them
    assert h.one("SELECT verdict_detail FROM evidence") == report.detail

    h.advance(days=2)
    (again,) = plan_timestamps(h.conn, h.now, timedelta(minutes=1))
    assert again.authorities == [DOWN] and again.round == 2


def test_a_page_that_opts_out_keeps_no_evidence_and_no_authority_is_asked(h: Harness) -> None:
    """The capture's files are forgotten (the page asks not to be archived): its manifest's
    fingerprint goes too, no timestamp is asked for, and its report seen again (redelivered
    after the writer restarted) brings neither back."""
    h.policy = replace(h.policy, timestamp_authorities=(DOWN,))
    h.apply(*feed_messages())
    h.dispatch()
    job = dict(h.rows("SELECT * FROM archive_jobs WHERE status = 'running' ORDER BY id")[0])
    report = evidence_messages(job)[0]
    nav = ArchiveResultRecord(status="failed", plugin="navigate", hook=NAV,
                              error_code="E_NAVIGATE_DECLINED")  # fmt: skip
    h.apply(report, event(job, 0, nav), done(job, records=1))
    assert h.one("SELECT status FROM links WHERE id = ?", job["link_id"]) == "failed"
    for _ in range(2):
        assert h.rows("SELECT * FROM evidence") == []
        assert h.rows("SELECT * FROM evidence_timestamps") == []
        assert plan_timestamps(h.conn, h.now, timedelta(minutes=1)) == []
        h.apply(report)
