"""CaptureDone: success, retries with the shared backoff schedule, permanent failures."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

import pytest

from services.writer.clock import iso
from shared.capture.artifacts import artifact_key, run_prefix
from shared.capture.evidence_builder import as_entry
from shared.evidence.manifest import latest_artifacts
from shared.hooks.records import ArchiveResultRecord, ArtifactRecord
from shared.hooks.retry import BACKOFF
from testkit.writer_harness import Harness, done, event, occ, post

URL = "https://www.tiktok.com/@a/video/1"
FETCH = "on_Snapshot__41_fetch.py"
SHOT = "on_Snapshot__51_screenshot.js"


def start(h: Harness):
    h.apply(post("g1", occ(URL)))
    h.dispatch()
    return h.job(1)


def res(hook: str, status: str, code: str | None = None, attempt: int | None = None):
    return ArchiveResultRecord(
        status=status,
        plugin=hook.split("_")[-1].split(".")[0],
        hook=hook,
        error_code=code,
        attempt=attempt,
    )  # type: ignore[arg-type]


def test_success_marks_the_link_archived(h: Harness) -> None:
    job = start(h)
    h.apply(event(job, 0, res(FETCH, "succeeded")), done(job, records=1))
    job = h.job(1)
    assert (job["status"], job["finished_at"], job["deadline"]) == ("succeeded", iso(h.now), None)
    link = h.rows("SELECT * FROM links")[0]
    assert (link["status"], link["last_archived_at"]) == ("archived", iso(h.now))
    assert h.one("SELECT status FROM snapshots") == "sealed"


def test_every_hook_failing_softly_fails_the_job(h: Harness) -> None:
    job = start(h)
    h.apply(event(job, 0, res(FETCH, "failed", "E_FETCH_HTTP_404")), done(job, records=1))
    job = h.job(1)
    assert job["status"] == "failed" and "E_FETCH_HTTP_404" in job["last_error"]
    assert h.rows("SELECT status, last_archived_at FROM links")[0][:] == ("failed", None)


def test_hard_failures_retry_with_backoff_only_the_failed_hooks(h: Harness) -> None:
    job = start(h)
    h.apply(
        event(job, 0, res(FETCH, "succeeded")),
        event(job, 1, res(SHOT, "failed")),
        done(job, records=2, retry=[SHOT]),
    )
    job = h.job(1)
    assert job["status"] == "queued" and job["not_before"] == iso(h.now + BACKOFF[0])
    assert json.loads(job["retry_hooks"]) == [SHOT]
    assert h.dispatch() == []  # not due yet
    h.now += BACKOFF[0]
    (again,) = h.dispatch()
    assert (again.attempt, again.hooks, again.snapshot_id) == (2, [SHOT], job["snapshot_id"])
    h.apply(done(h.job(1), retry=[SHOT]))
    assert h.job(1)["not_before"] == iso(h.now + BACKOFF[1])


def test_a_retry_lists_each_files_newest_among_those_kept(h: Harness) -> None:
    """A re-run hook's file has a key of its own run (issue 32): the next retry's manifest
    lists the newest of each plugin and path, the earlier attempt's row kept beside it."""
    job = start(h)
    keys = []
    for attempt in (1, 2):
        folder = run_prefix("archives/", job["link_id"], job["snapshot_id"], attempt, 1)
        keys.append(artifact_key(folder, "screenshot", "screenshot.png"))
        shot = ArtifactRecord(
            plugin="screenshot", kind="screenshot", path="screenshot.png", s3_key=keys[-1],
            content_type="image/png", bytes=attempt, sha256=str(attempt) * 64,
        )  # fmt: skip
        h.apply(
            event(h.job(1), 0, shot),
            event(h.job(1), 1, res(SHOT, "failed")),
            done(h.job(1), records=2, retry=[SHOT]),
        )
        h.now += BACKOFF[attempt - 1]
        (again,) = h.dispatch()
    assert again.attempt == 3 and [a.s3_key for a in again.kept] == keys
    (listed,) = latest_artifacts((as_entry(a) for a in again.kept), ())
    assert (listed.key, listed.sha256) == (keys[1], "2" * 64)


def test_attempts_are_capped(h: Harness) -> None:
    h.policy = replace(h.policy, max_attempts=2)
    job = start(h)
    h.apply(done(job, error="S3 down"))
    assert h.job(1)["status"] == "queued" and h.job(1)["last_error"] == "S3 down"
    h.now += BACKOFF[0]
    h.dispatch()
    h.apply(done(h.job(1), error="S3 down"))
    job = h.job(1)
    assert job["status"] == "failed"
    assert job["last_error"] == "gave up after 2 attempts: S3 down"
    assert h.one("SELECT status FROM links") == "failed"


def test_permanent_failures_are_not_retried(h: Harness) -> None:
    job = start(h)
    h.apply(
        event(job, 0, res(FETCH, "failed", "E_BINARY_MISSING")), done(job, records=1, retry=[FETCH])
    )
    assert h.job(1)["status"] == "failed"


@pytest.mark.parametrize("key", [f"fetch/{FETCH}", FETCH])  # a worker's HookSpec.key, the file
def test_a_4xx_is_permanent_from_the_first_attempt(h: Harness, key: str) -> None:
    """The error table marks 4xx not retried (shared/hooks/error_codes.py): a hook asking for
    a retry of one is not retried."""
    job = start(h)
    h.apply(event(job, 0, res(FETCH, "failed", "E_FETCH_HTTP_403")), done(job, retry=[key]))
    assert h.job(1)["status"] == "failed"


@pytest.mark.parametrize("status", [408, 425, 429])
def test_a_4xx_meaning_later_is_retried(h: Harness, status: int) -> None:
    job = start(h)
    code = f"E_FETCH_HTTP_{status}"
    h.apply(event(job, 0, res(FETCH, "failed", code)), done(job, retry=[FETCH]))
    assert h.job(1)["status"] == "queued"


def test_reports_of_other_attempts_and_repeats_are_ignored(h: Harness) -> None:
    job = start(h)
    h.apply(done(job, attempt=7))
    assert h.job(1)["status"] == "running"
    h.apply(done(job, records=0, retry=[FETCH]))
    before = h.job(1)
    # The same attempt reported again by a second run (a redelivered job) changes nothing.
    h.advance(minutes=1)
    h.apply(done(job, retry=[FETCH], run=2))
    assert tuple(h.job(1)) == tuple(before)


@pytest.mark.parametrize("key", [f"fetch/{FETCH}", FETCH])
def test_a_retry_waits_as_long_as_its_hooks_were_told_to(h: Harness, key: str) -> None:
    """The runner keeps a site's Retry-After in a hook's retry_at (a 503 "back in 3 h"):
    the job's next attempt is then, not at the schedule's 5 min."""
    job = start(h)
    later = h.now + timedelta(hours=3)
    failed = res(FETCH, "failed", "E_FETCH_HTTP_5XX").model_copy(
        update={"retry_at": later, "retry_after_s": 3 * 3600}
    )
    h.apply(event(job, 0, failed), done(job, retry=[key]))
    assert h.job(1)["status"] == "queued" and h.job(1)["not_before"] == iso(later)
    assert h.one("SELECT retry_at FROM links") == iso(later)


def test_a_retry_at_the_schedule_when_the_hooks_were_told_sooner(h: Harness) -> None:
    job = start(h)
    soon = h.now + timedelta(seconds=10)
    failed = res(FETCH, "failed", "E_FETCH_HTTP_5XX").model_copy(update={"retry_at": soon})
    h.apply(event(job, 0, failed), done(job, retry=[FETCH]))
    assert h.job(1)["not_before"] == iso(h.now + BACKOFF[0])
