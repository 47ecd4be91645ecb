"""The link page's evidence section offers only what a reader can get: a capture that kept no
file (the page asked not to be archived) has no evidence at all (its manifest went with its
files: a fingerprint of nothing kept, "verified", and `dla verify` failing would mislead), and
a capture without a WACZ never tells the reader to verify one."""

from __future__ import annotations

from pathlib import Path

from services.web.state import WebState
from services.writer.db import open_db
from shared.hooks.records import ArchiveResultRecord, ArtifactRecord, HookRecord
from shared.messages import EvidenceReport
from testkit.writer_harness import T0, Harness, done, event, occ, post, report_ids
from tests.web.conftest import client_for, web_settings

URL = "https://example.com/asks-not-to-be-kept"


def capture(data: Path, *codes: str, wacz: bool = False) -> None:
    """One link captured by two hooks, navigate and fetch, failing with `codes` (none: both
    succeeded, fetch keeping the page), its evidence stored (a WACZ with `wacz`)."""
    h = Harness(open_db(data / "archive.sqlite3"))
    h.apply(post("g1", occ(URL)))
    (job,) = (h.job(j.job_id) for j in h.dispatch())
    hooks = ("navigate", "on_Snapshot__21_navigate.py"), ("fetch", "on_Snapshot__41_fetch.py")
    records: list[HookRecord] = [
        ArchiveResultRecord(status="failed" if code else "succeeded", plugin=plugin, hook=hook,
                            error_code=code)
        for (plugin, hook), code in zip(hooks, codes or (None, None), strict=True)
    ]  # fmt: skip
    prefix = f"archives/{job['link_id']}/{job['snapshot_id']}"
    if not codes:
        body = ArtifactRecord(
            plugin="fetch", kind="raw_response", path="body.html", content_type="text/html",
            s3_key=f"{prefix}/fetch/body.html", bytes=3, sha256="d" * 64,
        )  # fmt: skip
        records.insert(0, body)
    report = EvidenceReport(
        **report_ids(job, None, 1),
        manifest_key=f"{prefix}/evidence/manifest.json",
        wacz_key=f"{prefix}/evidence/capture.wacz" if wacz else None,
        fingerprint="c" * 64,
        verdict="verified",
        detail="1 check passed",
        checked_at=T0,
    )
    h.apply(*(event(job, i, r) for i, r in enumerate(records)), report,
            done(job, records=len(records)))  # fmt: skip
    h.apply(report)  # seen again (redelivered after a restart)
    h.conn.close()


async def evidence_of(data: Path) -> tuple[dict, str | None]:
    """The link's JSON evidence, and its page's evidence section (None: no section)."""
    state = WebState.of(web_settings(data))
    async with client_for(state) as c:
        link = (await c.get("/links/1.json")).json()
        page = (await c.get("/links/1", headers={"accept": "text/html"})).text
    state.db.dispose()
    if 'id="evidence"' not in page:
        return link, None
    section = page[page.index('id="evidence"') :]
    return link, section[: section.index("</section>")]


async def test_a_capture_that_kept_nothing_has_no_evidence(tmp_path: Path) -> None:
    capture(tmp_path, "E_NAVIGATE_DECLINED", "E_FETCH_DECLINED")
    link, section = await evidence_of(tmp_path)
    assert link["status"] == "failed" and link["artifacts"] == []
    assert link["evidence"] is None and section is None
    assert "dla verify" not in (section or "")


async def test_a_capture_without_a_wacz_offers_none_to_verify(tmp_path: Path) -> None:
    capture(tmp_path)
    link, section = await evidence_of(tmp_path)
    assert link["evidence"]["fingerprint"] == "c" * 64 and link["evidence"]["wacz_url"] is None
    assert section is not None and "c" * 64 in section
    assert "capture.wacz" not in section, "no WACZ to verify"
    assert "dla verify 1" in section
