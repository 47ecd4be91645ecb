"""The capture history tells what each capture kept: a job that succeeded with part of the page
is a `partial` capture, on the page and in the JSON (in-process; S3 and NATS are absent)."""

from __future__ import annotations

import re
from pathlib import Path

from services.web.present import capture_state
from services.web.state import WebState
from services.writer.db import open_db
from shared.hooks.records import ArchiveResultRecord, HookRecord, MetadataRecord
from testkit.writer_harness import Harness, done, event, occ, post
from tests.web.conftest import client_for, web_settings

URL = "https://news.example/story"


def result(hook: str, status: str, code: str | None = None) -> ArchiveResultRecord:
    plugin = hook.split("_")[-1].split(".")[0]
    return ArchiveResultRecord(status=status, plugin=plugin, hook=hook, error_code=code)


def test_a_capture_shows_its_job_while_it_runs_then_what_it_kept() -> None:
    assert capture_state({"status": "queued", "job_status": "queued", "outcome": None}) == "queued"
    ended = {"status": "sealed", "job_status": "succeeded"}
    assert capture_state(ended | {"outcome": "partial"}) == "partial"
    assert capture_state(ended | {"outcome": "succeeded"}) == "succeeded"
    # a retry waiting or running: the job's state, not the last attempt's outcome
    assert capture_state({"status": "started", "job_status": "queued", "outcome": "failed"}) == (
        "queued"
    )
    assert capture_state({"status": "sealed", "outcome": "partial"}) == "partial"  # no job
    assert capture_state({"status": "started", "outcome": None}) == "started"


async def test_a_succeeded_job_that_kept_part_of_the_page_is_a_partial_capture(
    tmp_path: Path,
) -> None:
    h = Harness(open_db(tmp_path / "archive.sqlite3"))
    h.apply(post("g1", occ(URL)))
    [job] = [h.job(j.job_id) for j in h.dispatch()]
    records: list[HookRecord] = [
        MetadataRecord(title="A story"),
        result("on_Snapshot__21_navigate.py", "failed", "E_NAVIGATE_TIMEOUT"),
        result("on_Snapshot__41_fetch.py", "succeeded"),
    ]
    h.apply(*(event(job, i, r) for i, r in enumerate(records)), done(job, records=len(records)))
    assert h.job(job["id"])["status"] == "succeeded"
    h.conn.close()

    state = WebState.of(web_settings(tmp_path))
    async with client_for(state) as client:
        detail = (await client.get("/links/1.json")).json()
        page = (await client.get("/links/1", headers={"accept": "text/html"})).text
    state.db.dispose()
    [snapshot] = detail["snapshots"]
    assert (snapshot["status"], snapshot["outcome"]) == ("succeeded", "partial")
    history = page[page.index('id="history"') :]
    summary = re.search(r"<summary>.*?</summary>", history, re.S)
    assert summary is not None
    assert 'status-partial">partial<' in summary.group(0)
    assert "succeeded" not in summary.group(0)
