"""The link page's evidence section offers only what a reader can get: a capture that kept no
file (the page asked not to be archived) names its manifest's fingerprint without a link to
files there are none of, and never tells the reader to verify a WACZ it does not have."""

from __future__ import annotations

from pathlib import Path

from services.web.state import WebState
from services.writer.db import open_db
from shared.hooks.records import ArchiveResultRecord
from shared.messages import EvidenceReport
from testkit.writer_harness import T0, Harness, done, event, occ, post, report_ids
from tests.web.conftest import client_for, web_settings

URL = "https://example.com/asks-not-to-be-kept"


def declined(data: Path) -> None:
    h = Harness(open_db(data / "archive.sqlite3"))
    h.apply(post("g1", occ(URL)))
    (job,) = (h.job(j.job_id) for j in h.dispatch())
    records = [
        ArchiveResultRecord(status="failed", plugin="navigate", hook="on_Snapshot__21_navigate.py",
                            error_code="E_NAVIGATE_DECLINED"),
        ArchiveResultRecord(status="failed", plugin="fetch", hook="on_Snapshot__30_fetch.py",
                            error_code="E_FETCH_DECLINED"),
    ]  # fmt: skip
    prefix = f"archives/{job['link_id']}/{job['snapshot_id']}/evidence"
    report = EvidenceReport(
        **report_ids(job, None, 1),
        manifest_key=f"{prefix}/manifest.json",
        fingerprint="c" * 64,
        verdict="verified",
        detail="1 checks passed",
        checked_at=T0,
    )
    h.apply(*(event(job, i, r) for i, r in enumerate(records)), report,
            done(job, records=len(records)))  # fmt: skip
    h.conn.close()


async def test_a_capture_that_kept_nothing_offers_no_file_to_check(tmp_path: Path) -> None:
    declined(tmp_path)
    state = WebState.of(web_settings(tmp_path))
    async with client_for(state) as c:
        link = (await c.get("/links/1.json")).json()
        assert link["evidence"]["fingerprint"] == "c" * 64
        assert link["artifacts"] == [] and link["evidence"]["wacz_url"] is None
        page = (await c.get("/links/1", headers={"accept": "text/html"})).text
    state.db.dispose()
    evidence = page[page.index('id="evidence"') :]
    evidence = evidence[: evidence.index("</section>")]
    assert "c" * 64 in evidence
    assert 'href="#downloads"' not in evidence, "no link to files there are none of"
    assert "capture.wacz" not in evidence, "no WACZ to verify"
    assert "dla verify 1" in evidence
