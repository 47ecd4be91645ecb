"""A retried capture keeps the files of each try (docs/architecture.md, "No stored object
ever changes"): the writer records which attempt and run stored each one, and the link page's
Downloads say which is which, only when one capture has files of more than one try. (The
writer's real apply path, the web in-process.)"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from services.web.state import WebState
from services.writer.db import open_db
from shared.capture.artifacts import artifact_key, run_prefix
from shared.hooks.records import ArchiveResultRecord, ArtifactRecord
from shared.hooks.retry import BACKOFF
from testkit.writer_harness import Harness, done, event, occ, post
from tests.web.conftest import client_for, web_settings

URL = "https://news.example.org/story"
SHOT = "on_Snapshot__51_screenshot.py"


def shot(job: dict, attempt: int, run: int) -> ArtifactRecord:
    folder = run_prefix("archives/", job["link_id"], job["snapshot_id"], attempt, run)
    return ArtifactRecord(
        plugin="screenshot", kind="screenshot", path="screenshot.png",
        s3_key=artifact_key(folder, "screenshot", "screenshot.png"), content_type="image/png",
        bytes=10 * attempt + run, sha256=hashlib.sha256(f"{attempt}.{run}".encode()).hexdigest(),
    )  # fmt: skip


def archive(data: Path, tries: list[tuple[int, int]]) -> None:
    """One link whose capture stored a screenshot in each (attempt, run) of `tries`, every
    try but the last failing its screenshot hook (retried), the last succeeding."""
    h = Harness(open_db(data / "archive.sqlite3"))
    h.apply(post("g1", occ(URL)))
    h.dispatch()
    for n, (attempt, run) in enumerate(tries):
        job = h.job(1)
        last = n == len(tries) - 1
        result = ArchiveResultRecord(
            status="succeeded" if last else "failed", plugin="screenshot", hook=SHOT
        )  # type: ignore[call-arg]
        h.apply(
            event(job, 0, shot(dict(job), attempt, run), attempt=attempt, run=run),
            event(job, 1, result, attempt=attempt, run=run),
        )
        if last:
            h.apply(done(job, records=2))
        elif tries[n + 1][0] > attempt:  # the next try is a new attempt: this one failed
            h.apply(done(job, records=2, retry=[SHOT]))
            h.now += BACKOFF[attempt - 1]
            h.dispatch()
    assert [tuple(r) for r in h.rows("SELECT attempt, run FROM archive_artifacts")] == tries
    h.conn.close()


async def test_each_files_try_is_named_when_a_capture_has_several(tmp_path: Path) -> None:
    archive(tmp_path, [(1, 1), (1, 2), (2, 1)])
    async with client_for(WebState.of(web_settings(tmp_path))) as c:
        files = (await c.get("/links/1.json")).json()["artifacts"]
        assert [(a["attempt"], a["run"]) for a in files] == [(1, 1), (1, 2), (2, 1)]
        page = (await c.get("/links/1", headers={"accept": "text/html"})).text
    downloads = page.split('id="downloads"', 1)[1].split("</section>", 1)[0]
    assert "<th>Try</th>" in downloads
    # newest first: the second attempt, then the first attempt's second run and first run
    tries = re.findall(r'<td class="small">([^<]*)</td>', downloads)
    assert tries == ["attempt 2", "attempt 1, again", "attempt 1"]


async def test_a_capture_of_one_try_shows_no_try_column(tmp_path: Path) -> None:
    archive(tmp_path, [(1, 1)])
    async with client_for(WebState.of(web_settings(tmp_path))) as c:
        page = (await c.get("/links/1", headers={"accept": "text/html"})).text
    assert "screenshot.png" in page and "<th>Try</th>" not in page
