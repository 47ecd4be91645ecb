"""What a reader is told of the originals: source statuses with their evidence, badges on the
link page and in lists, the source_status filter, older captures in search, /gone.xml, the
stats by platform, and two captures compared (S3 away here: the texts' note; with S3 the
diff is tested in test_liveness_browser.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from xml.etree import ElementTree as ET

import httpx
import pytest

from services.web.state import WebState
from testkit.writer_harness import T0
from tests.web.conftest import client_for, web_settings
from tests.web.liveness_archive import build

D = timedelta(days=1)


def iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("liveness-web")
    build(data / "archive.sqlite3").conn.close()
    return data


@pytest.fixture
async def web(watched: Path) -> AsyncIterator[httpx.AsyncClient]:
    state = WebState.of(web_settings(watched))
    async with client_for(state) as c:
        yield c
    state.db.dispose()


async def test_a_gone_link_says_since_when_why_and_shows_every_check(
    web: httpx.AsyncClient,
) -> None:
    source = (await web.get("/links/2.json")).json()["source_status"]
    assert (source["state"], source["reason"], source["tombstone"]) == ("gone", "HTTP 404", False)
    assert source["since"] == iso(T0 + timedelta(hours=2))
    assert source["last_checked_at"] == iso(T0 + 4 * D)
    assert [(o["answer"], o["status"], o["reason"], o["via"]) for o in source["observations"]] == [
        ("gone", 404, "not_found", "http")
    ] * 3
    assert source["observations"][0]["at"] == iso(T0 + 4 * D), "newest first"
    page = (await web.get("/links/2")).text
    assert "deleted at source on 1 January" in page
    assert 'href="#source"' in page and 'id="source"' in page
    assert page.count("<tr>") >= 4, "the evidence: one row per check"


@pytest.mark.parametrize(
    ("link", "words", "platform"),
    [(3, "removed by a moderator", "reddit"), (4, "account suspended", "x")],
)
async def test_a_platforms_tombstone_reads_as_its_reason(
    web: httpx.AsyncClient, link: int, words: str, platform: str
) -> None:
    source = (await web.get(f"/links/{link}.json")).json()["source_status"]
    assert (source["state"], source["reason"], source["tombstone"]) == ("gone", words, True)
    assert all(o["via"].startswith(platform) for o in source["observations"])
    assert words in (await web.get(f"/links/{link}")).text


async def test_unknown_and_unchecked_links(web: httpx.AsyncClient) -> None:
    busy = (await web.get("/links/5.json")).json()["source_status"]
    assert (busy["state"], busy["reason"]) == ("unknown", "rate limited (HTTP 429)")
    assert busy["observations"][0]["words"] == "slow down"
    page = (await web.get("/links/5")).text
    assert "could not tell" in page and "deleted at source" not in page
    quiet = (await web.get("/links/6.json")).json()["source_status"]
    assert quiet == {
        "state": "unknown", "since": None, "reason": None, "tombstone": False,
        "last_checked_at": None, "edited": False, "next_check_at": quiet["next_check_at"],
        "observations": [],
    }  # fmt: skip
    assert quiet["next_check_at"] is not None
    assert "Not checked yet" in (await web.get("/links/6")).text
    never = (await web.get("/links/7.json")).json()
    assert never["status"] == "failed" and never["source_status"]["next_check_at"] is None
    page = (await web.get("/links/7")).text
    assert "Not watched: the original is checked once a capture of it has been kept" in page
    assert "Not checked yet" not in page, "a failed link's original is never checked"


async def test_lists_show_the_badges_with_the_evidence_one_click_away(
    web: httpx.AsyncClient,
) -> None:
    home = (await web.get("/")).text
    for link, words in ((2, "deleted at source on 1 January"),
                        (3, "removed by a moderator"), (4, "account suspended")):  # fmt: skip
        assert f'<a class="badge badge-gone" href="/links/{link}#source"' in home
        assert words in home
    listed = {r["id"]: r["source_status"] for r in (await web.get("/index.json")).json()["links"]}
    assert listed[2]["state"] == "gone" and listed[6] is None and listed[1]["edited"] is True


async def test_search_and_the_api_filter_on_the_source_status(web: httpx.AsyncClient) -> None:
    found = (await web.get("/search.json?source_status=gone")).json()
    assert sorted(r["link_id"] for r in found["results"]) == [2, 3, 4]
    assert found["total"] == 3 and not found["total_capped"]
    words = (await web.get("/search.json?q=words&source_status=gone")).json()
    assert sorted(r["link_id"] for r in words["results"]) == [2, 3, 4]
    present = (await web.get("/search.json?q=words&source_status=present")).json()
    assert present["results"] == []
    assert (await web.get("/search.json?source_status=dead")).status_code == 400
    page = (await web.get("/search?source_status=gone")).text
    assert "removed by a moderator" in page and page.count('class="item"') == 3


async def test_search_finds_text_only_an_older_capture_holds_and_says_which(
    web: httpx.AsyncClient,
) -> None:
    may = (await web.get("/search.json?q=bridge+May")).json()
    assert may["results"] == [], "the newest capture says June"
    (older,) = may["older_captures"]
    link = (await web.get("/links/1.json")).json()
    first = min(link["snapshots"], key=lambda s: s["started_at"])
    assert (older["link_id"], older["snapshot_id"]) == (1, first["id"])
    assert older["captured_at"] == first["started_at"]
    assert "<mark>May</mark>" in older["snippet"]
    june = (await web.get("/search.json?q=bridge+June")).json()
    assert [r["link_id"] for r in june["results"]] == [1] and june["older_captures"] == []
    page = (await web.get("/search?q=bridge+May")).text
    assert "Only in older captures" in page and f"a={first['id']}" in page
    later = (await web.get("/search.json?q=bridge+May&cursor=5")).json()
    assert later["older_captures"] == [], "the first page only"


async def test_gone_xml_lists_newly_gone_links_newest_first(web: httpx.AsyncClient) -> None:
    resp = await web.get("/gone.xml")
    assert resp.headers["content-type"].startswith("application/rss+xml")
    items = ET.fromstring(resp.content).findall("./channel/item")
    links = [i.findtext("link") or "" for i in items]
    assert [u.rsplit("/", 1)[1] for u in links] == ["2#source", "4#source", "3#source"]
    assert "deleted at source" in (items[0].findtext("description") or "")
    assert "account suspended" in (items[1].findtext("description") or "")


async def test_the_stats_count_gone_links_by_platform(web: httpx.AsyncClient) -> None:
    stats = (await web.get("/stats.json")).json()
    assert stats["gone_by_platform"] == {"reddit": 1, "web": 1, "x": 1}
    assert "Gone at source, by platform" in (await web.get("/stats")).text


async def test_an_edited_link_says_so_and_offers_its_captures(web: httpx.AsyncClient) -> None:
    page = (await web.get("/links/1")).text
    assert "Edited after it was posted" in page
    assert 'action="/links/1/compare"' in page and page.count("<option") == 4
    assert "Edited after it was posted" not in (await web.get("/links/2")).text
    one = (await web.get("/links/2")).text
    assert 'id="captures"' not in one, "one capture: nothing to compare"


async def test_two_captures_side_by_side_with_s3_away(web: httpx.AsyncClient) -> None:
    resp = await web.get("/links/1/compare")
    assert resp.status_code == 200
    csp = resp.headers["content-security-policy"]
    assert "script-src" not in csp and "default-src 'none'" in csp
    assert "<script" not in resp.text
    assert resp.text.count('<figure class="shot">') == 2
    assert "The texts are unavailable right now." in resp.text
    body = (await web.get("/links/1/compare.json")).json()
    assert body["diff"] is None and body["note"] == "The texts are unavailable right now."
    assert body["a"]["captured_at"] < body["b"]["captured_at"], "oldest against newest"
    assert body["a"]["screenshot"]["kind"] == body["b"]["screenshot"]["kind"] == "screenshot"


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/links/1/compare?a=nothex", 400),
        ("/links/1/compare.json?a=" + "0" * 32, 404),
        ("/links/2/compare", 404),
        ("/links/99/compare.json", 404),
    ],
)
async def test_a_comparison_that_cannot_be_is_a_clear_error(
    web: httpx.AsyncClient, path: str, status: int
) -> None:
    assert (await web.get(path)).status_code == status
