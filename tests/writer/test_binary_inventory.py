"""Binaries per machine; hooks skipped for a missing binary run again once it appears."""

from __future__ import annotations

import json

from shared.hooks.records import ArchiveResultRecord, BinaryRecord
from shared.messages import WorkerBinaries
from testkit.writer_harness import T0, Harness, done, event, occ, post

URL = "https://www.tiktok.com/@a/video/1"
MEDIA = "on_Snapshot__63_media.bg.py"


def report(present: bool, worker: str = "host-b:7") -> WorkerBinaries:
    rec = BinaryRecord(
        name="yt-dlp",
        status="succeeded" if present else "failed",
        abspath="/venv/bin/yt-dlp" if present else None,
        version="2026.1.1" if present else None,
    )
    return WorkerBinaries(worker=worker, machine=worker.split(":")[0], detected_at=T0,
                          binaries=[rec])  # fmt: skip


def capture_with_missing_binary(h: Harness) -> int:
    h.apply(post("g1", occ(URL)))
    (job,) = h.dispatch()
    row = h.job(job.job_id)
    skipped = ArchiveResultRecord(
        status="skipped", plugin="media", hook=MEDIA, error_code="E_BINARY_MISSING",
        output_str="missing binary: yt-dlp",
    )  # fmt: skip
    fetched = ArchiveResultRecord(
        status="succeeded", plugin="fetch", hook="on_Snapshot__41_fetch.py"
    )
    h.apply(event(row, 0, skipped), event(row, 1, fetched), done(row, records=2))
    assert h.job(job.job_id)["status"] == "succeeded"
    return job.job_id


def test_binaries_are_recorded_per_machine(h: Harness) -> None:
    h.apply(report(True, "host-a:1"), report(False, "host-b:2"))
    rows = h.tuples("SELECT machine, name, status, abspath FROM binaries ORDER BY machine")
    assert rows == [("host-a", "yt-dlp", "succeeded", "/venv/bin/yt-dlp"),
                    ("host-b", "yt-dlp", "failed", "")]  # fmt: skip


def test_a_binary_that_appears_requeues_the_hooks_that_waited_for_it(h: Harness) -> None:
    job_id = capture_with_missing_binary(h)
    h.apply(report(False))
    assert h.job(job_id)["status"] == "succeeded", "still missing: nothing to re-run"
    h.advance(minutes=1)
    h.apply(report(True, "host-c:3"))
    job = h.job(job_id)
    assert job["status"] == "queued" and json.loads(job["retry_hooks"]) == [f"media/{MEDIA}"]
    (again,) = h.dispatch()
    assert again.job_id == job_id and again.hooks == [f"media/{MEDIA}"]


def test_a_report_applied_twice_changes_nothing(h: Harness) -> None:
    capture_with_missing_binary(h)
    msg = report(True)
    h.apply(msg)
    first = h.tuples("SELECT * FROM archive_jobs"), h.tuples("SELECT * FROM binaries")
    result = h.apply(msg)
    assert len(result.duplicates) == 1
    assert (h.tuples("SELECT * FROM archive_jobs"), h.tuples("SELECT * FROM binaries")) == first
