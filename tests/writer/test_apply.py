"""Idempotent batched apply: duplicates change nothing; a bad message blocks nothing."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import timedelta

import pytest

from services.writer import apply as apply_mod
from services.writer.apply import is_transient
from shared.messages import TakedownCommand
from testkit.writer_harness import Harness, dump, occ, post
from tests.writer.scenario import (
    admin_messages,
    capture_messages,
    evidence_messages,
    external_messages,
    feed_messages,
    liveness_messages,
    recapture_messages,
)


def run_scenario(h: Harness) -> list:
    h.policy = replace(h.policy, external_services=("wayback",))
    messages = feed_messages()
    h.apply(*messages)
    h.dispatch()
    job = dict(h.rows("SELECT * FROM archive_jobs WHERE status = 'running' ORDER BY id")[0])
    captures = capture_messages(job) + evidence_messages(job) + external_messages(job)
    h.apply(*captures)
    h.advance(hours=2)
    (check,) = h.checks()
    checks = liveness_messages(check, h.now)
    h.apply(*checks)
    h.dispatch()
    again = dict(
        h.rows(
            "SELECT * FROM archive_jobs WHERE status = 'running' AND link_id = ? ORDER BY id DESC",
            check.link_id,
        )[0]
    )
    recapture = recapture_messages(again)
    h.apply(*recapture)
    tiktok = h.one("SELECT id FROM links WHERE canonical_url LIKE '%tiktok%'")
    admin = admin_messages(tiktok)
    h.apply(*admin)  # held for the undo window (takedown_holds)
    # with no undo window a takedown purges at once: a link's S3 prefix goes to s3_removals
    h.policy = replace(h.policy, takedown_undo=timedelta(0))
    bare = h.one(
        "SELECT id FROM links WHERE taken_down_at IS NULL"
        " AND id NOT IN (SELECT link_id FROM archive_artifacts) ORDER BY id LIMIT 1"
    )
    purge = [
        TakedownCommand(
            link_id=bare,
            reason="court order",
            admin="alice",
            request_id="t2",
            requested_at=h.now,
        )
    ]
    h.apply(*purge)
    return messages + captures + checks + recapture + admin + purge


def test_every_message_type_applied_twice_changes_nothing(h: Harness) -> None:
    messages = run_scenario(h)
    before = dump(h.conn)
    empty = [table for table, rows in before.items() if not rows]
    assert empty == [], "the scenario must exercise every table"
    h.advance(hours=3)  # a redelivery much later: the clock must not matter either
    res = h.apply(*messages)
    assert len(res.duplicates) == len(messages) and not res.applied
    for m in messages:  # and one by one
        assert h.apply(m).duplicates
    assert dump(h.conn) == before


def test_a_bad_message_is_isolated_from_its_batch(h: Harness, monkeypatch) -> None:
    real = apply_mod._HANDLERS[type(post("x"))]

    def explode(ctx, message):
        if message.guid == "bad":
            raise ValueError("boom")
        return real(ctx, message)

    monkeypatch.setitem(apply_mod._HANDLERS, type(post("x")), explode)
    res = h.apply(post("a", occ("https://x.com/a/status/1")), post("bad"), post("b"))
    assert [i.message.msg_id().split(":")[1] for i in res.applied] == ["a", "b"]
    assert [(i.message.msg_id().split(":")[1], str(e)) for i, e in res.failed] == [("bad", "boom")]
    assert h.tuples("SELECT guid FROM discourse_posts ORDER BY guid") == [("a",), ("b",)]
    assert h.one("SELECT count(*) FROM processed_messages") == 2


def test_a_locked_database_means_retry_later_and_nothing_half_done(h: Harness, db_path) -> None:
    h.conn.execute("PRAGMA busy_timeout = 50")
    other = sqlite3.connect(db_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        res = h.apply(post("a"), post("b"))
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert [i.message.msg_id().split(":")[1] for i in res.retry] == ["a", "b"]
    assert not res.applied and res.error is not None and is_transient(res.error)
    assert h.one("SELECT count(*) FROM discourse_posts") == 0
    res = h.apply(post("a"), post("b"))
    assert len(res.applied) == 2


@pytest.mark.parametrize(
    ("exc", "transient"),
    [
        (sqlite3.OperationalError("database or disk is full"), True),
        (sqlite3.OperationalError("database is locked"), True),
        (sqlite3.OperationalError("no such column: x"), False),
        (sqlite3.IntegrityError("UNIQUE constraint failed"), False),
        (ValueError("x"), False),
    ],
)
def test_transient_errors(exc: Exception, transient: bool) -> None:
    assert is_transient(exc) is transient
