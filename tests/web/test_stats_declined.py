"""The stats page tells the links whose page asked not to be archived apart from failures."""

from __future__ import annotations

from pathlib import Path

from services.web.state import WebState
from tests.web.archive import build
from tests.web.conftest import client_for, web_settings


async def test_stats_count_the_pages_that_asked_not_to_be_archived(tmp_path: Path) -> None:
    h = build(tmp_path / "archive.sqlite3")
    # link 2 failed with a 404; as if its page had answered X-No-Archive instead
    h.conn.execute("UPDATE links SET last_error_code = 'E_NAVIGATE_DECLINED' WHERE id = 2")
    h.conn.execute(
        "UPDATE archive_results SET error_code = 'E_NAVIGATE_DECLINED' "
        "WHERE error_code = 'E_FETCH_HTTP_404'"
    )
    h.conn.commit()
    h.conn.close()
    state = WebState.of(web_settings(tmp_path))
    try:
        async with client_for(state) as client:
            stats = (await client.get("/stats.json")).json()
            page = (await client.get("/stats", headers={"accept": "text/html"})).text
    finally:
        state.db.dispose()
    assert stats["links"]["by_status"]["failed"] == 1 and stats["links"]["declined"] == 1
    assert "1 of them asked not to be archived" in page
    # the failed step's code is listed with what it means
    assert {f["error_code"]: f["declined"] for f in stats["failures"]} == {
        "E_NAVIGATE_DECLINED": True
    }
    assert "<code>E_NAVIGATE_DECLINED</code> <span" in page
    assert "the page asks not to be archived</span>" in page
