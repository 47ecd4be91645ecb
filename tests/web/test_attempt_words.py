"""Public pages speak to readers: what the last attempt kept and what it could not, in words;
hook file names, error codes and exception text stay in the JSON (in-process; no S3, no NATS).
"""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from services.web.attempt_words import attempt_note, step_detail
from services.web.state import WebState
from services.writer.db import open_db
from shared.hooks.error_codes import KINDS, READER_WORDS, reader_words
from shared.hooks.records import ArchiveResultRecord, HookRecord, PostRecord
from shared.platforms.post import Author, Post
from testkit.writer_harness import Harness, done, event, occ, post
from tests.web.conftest import client_for, web_settings

X_URL = "https://x.com/ada_example/status/1790000000000000009"
DNS_TEXT = "net::ERR_NAME_NOT_RESOLVED [Errno -2] Name or service not known"


def result(hook: str, status: str, code: str | None = None, out: str = "") -> ArchiveResultRecord:
    plugin = hook.split("__", 1)[1].split("_", 1)[1].removesuffix(".py")
    return ArchiveResultRecord(
        status=status, plugin=plugin, hook=hook, error_code=code, output_str=out
    )


def x_post() -> Post:
    return Post(
        platform="x", post_id="1790000000000000009", url=X_URL,
        author=Author(name="Ada Example", handle="ada_example"),
        text="Harbour lights at dusk.", created_at="2024-05-01T09:15:00Z", source="syndication",
    )  # fmt: skip


def test_every_kind_of_ending_has_reader_words() -> None:
    assert set(READER_WORDS) == set(KINDS)
    for words in READER_WORDS.values():
        assert words and "E_" not in words and "_" not in words, words
    assert reader_words("E_FETCH_HTTP_404") == "the site answered 404 (Not Found)"
    assert reader_words("E_X_LOGIN_WALL") == "the site asked for a login"
    assert reader_words("E_SOMETHING_NEW") == "something went wrong"


def test_the_note_says_what_was_kept_and_what_was_not() -> None:
    rows: list[dict[str, str | None]] = [
        {"hook": "on_Snapshot__15_x.py", "plugin": "x", "status": "succeeded",
         "error_code": None},
        {"hook": "on_Snapshot__21_navigate.py", "plugin": "navigate", "status": "failed",
         "error_code": "E_NAVIGATE_DNS"},
        {"hook": "on_Snapshot__51_screenshot.py", "plugin": "screenshot", "status": "skipped",
         "error_code": "E_SCREENSHOT_NOT_LOADED"},
    ]  # fmt: skip
    note = attempt_note([{"results": rows}], {"platform": "x", "source": "syndication"})
    assert note == (
        "The post was kept from X's API; the page itself could not be loaded: "
        "the site's name could not be found."
    )
    shot = {"plugin": "screenshot", "status": "succeeded", "error_code": None, "hook": "h51"}
    assert attempt_note([{"results": [shot]}], None) == "Kept: screenshot."
    assert step_detail(rows[2]) == "nothing was loaded"


def test_a_page_that_opts_out_is_not_said_to_have_failed_to_load() -> None:
    declined = [
        {"hook": "on_Snapshot__21_navigate.py", "plugin": "navigate", "status": "failed",
         "error_code": "E_NAVIGATE_DECLINED"},
        {"hook": "on_Snapshot__41_fetch.py", "plugin": "fetch", "status": "failed",
         "error_code": "E_FETCH_DECLINED"},
    ]  # fmt: skip
    words = reader_words("E_NAVIGATE_DECLINED")
    note = attempt_note([{"results": declined}], None)
    assert note == f"{words[:1].upper()}{words[1:]}, so nothing of it was kept."
    assert "could not be loaded" not in note
    kept = attempt_note([{"results": declined}], {"platform": "x", "source": "syndication"})
    assert kept == f"The post was kept from X's API; nothing more: {words}."


def test_a_file_is_not_said_to_have_failed_to_load() -> None:
    """A link to an image or a video: the browser showed it, the fetch told it from a page."""
    rows = [
        {"hook": "on_Snapshot__21_navigate.py", "plugin": "navigate", "status": "succeeded",
         "error_code": None},
        {"hook": "on_Snapshot__41_fetch.py", "plugin": "fetch", "status": "failed",
         "error_code": "E_FETCH_NOT_HTML"},
        {"hook": "on_Snapshot__51_screenshot.py", "plugin": "screenshot", "status": "succeeded",
         "error_code": None},
    ]  # fmt: skip
    note = attempt_note([{"results": rows}], None)
    assert note == (
        "Kept: page itself, screenshot; it is a file, not a web page, so it was not stored as one."
    )


@pytest.fixture
async def pages(tmp_path: Path) -> dict[str, object]:
    h = Harness(open_db(tmp_path / "archive.sqlite3"))
    h.apply(post("g1", occ(X_URL)))
    [job] = [h.job(j.job_id) for j in h.dispatch()]
    records: list[HookRecord] = [
        PostRecord(post=x_post(), plugin="x"),
        result("on_Snapshot__15_x.py", "succeeded", out="post via syndication"),
        result("on_Snapshot__21_navigate.py", "failed", "E_NAVIGATE_NO_HOST", DNS_TEXT),
    ]
    h.apply(*(event(job, i, r) for i, r in enumerate(records)), done(job, records=len(records)))
    h.conn.close()
    state = WebState.of(web_settings(tmp_path))
    async with client_for(state) as client:
        detail = (await client.get("/links/1.json")).json()
        page = (await client.get("/links/1", headers={"accept": "text/html"})).text
    state.db.dispose()
    return {"json": detail, "html": page}


async def test_the_link_page_speaks_to_readers(pages: dict[str, object]) -> None:
    page = html.unescape(str(pages["html"]))
    assert "The post was kept from X's API; the page itself could not be loaded:" in page
    history = page[page.index('id="history"') :]
    for owners_only in ("on_Snapshot__", "E_NAVIGATE", "Errno", "ERR_NAME"):
        assert owners_only not in page, owners_only
    assert "the site's name does not exist" in history


async def test_the_json_keeps_the_owners_detail(pages: dict[str, object]) -> None:
    detail = pages["json"]
    assert isinstance(detail, dict)
    results = [r for s in detail["snapshots"] for r in s["results"]]
    navigate = next(r for r in results if r["plugin"] == "navigate")
    assert navigate["hook"] == "on_Snapshot__21_navigate.py"
    assert navigate["error_code"] == "E_NAVIGATE_NO_HOST"
    assert DNS_TEXT in navigate["output"]
