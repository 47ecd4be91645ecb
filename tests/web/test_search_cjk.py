"""Chinese, Japanese and Korean pages are found by any of their words, in the title, the
text and older captures' texts, and shown as they were (writer and web in process)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx

from services.web.state import WebState
from services.writer import linkstore, text_history
from services.writer.db import migrate, open_db
from shared.hooks.records import ArchiveResultRecord, HookRecord, MetadataRecord, TextRecord
from testkit.writer_harness import Harness, done, event, occ, post
from tests.web.conftest import client_for, web_settings

URL = "https://news.example.jp/story"
TITLE = "日本語のニュース"
TEXT = "東京の天気は晴れです。新しいiPhone発売の日。서울에서 만나요"


async def search(client: httpx.AsyncClient, q: str) -> dict:
    resp = await client.get("/search.json", params={"q": q})
    assert resp.status_code == 200, resp.text
    return resp.json()


async def test_a_word_inside_a_run_of_characters_is_found(tmp_path: Path) -> None:
    h = Harness(open_db(tmp_path / "archive.sqlite3"))
    h.apply(post("g1", occ(URL)))
    [job] = [h.job(j.job_id) for j in h.dispatch()]
    records: list[HookRecord] = [
        MetadataRecord(title=TITLE),
        TextRecord(text=TEXT),
        ArchiveResultRecord(status="succeeded", plugin="fetch", hook="on_Snapshot__41_fetch.py"),
    ]
    h.apply(*(event(job, i, r) for i, r in enumerate(records)), done(job, records=len(records)))
    h.conn.close()

    state = WebState.of(web_settings(tmp_path))
    async with client_for(state) as client:
        for word in ("ニュース", "日本語", "天気", "晴れ", "発売", "iPhone", "서울", TITLE):
            body = await search(client, word)
            assert [r["link_id"] for r in body["results"]] == [1], word
        for absent in ("語ニ", "大阪"):
            assert (await search(client, absent))["total"] == 0, absent
        hit = (await search(client, "天気"))["results"][0]
        detail = (await client.get("/links/1.json")).json()
        page = (await client.get("/search", params={"q": "ニュース"})).text
    state.db.dispose()
    assert "\u200b" not in hit["snippet"] and "<mark>天気</mark>" in hit["snippet"]
    assert hit["title"] == TITLE
    assert "\u200b" not in page and "<mark>ニュース</mark>" in page
    assert detail["metadata"]["title"] == TITLE


async def test_a_snippet_of_such_text_shows_a_sentence_not_24_characters(tmp_path: Path) -> None:
    h = Harness(open_db(tmp_path / "archive.sqlite3"))
    h.apply(post("g1", occ(URL)))
    [job] = [h.job(j.job_id) for j in h.dispatch()]
    long_text = (
        "今日は朝から雨が降っていましたが、午後には晴れて、公園で子供たちが遊んでいました。" * 4
    )
    h.apply(event(job, 0, TextRecord(text=long_text)), done(job, records=1))
    h.conn.close()
    state = WebState.of(web_settings(tmp_path))
    async with client_for(state) as client:
        [hit] = (await search(client, "公園"))["results"]
    state.db.dispose()
    shown = hit["snippet"].replace("<mark>", "").replace("</mark>", "").strip("…")
    assert len(shown) >= 60, shown  # a token is a character: 24 of them were half a line


def test_a_capture_with_the_same_text_keeps_no_older_copy(tmp_path: Path) -> None:
    conn = open_db(tmp_path / "archive.sqlite3")
    h = Harness(conn)
    h.apply(post("g1", occ(URL)))
    linkstore.set_fts(conn, 1, "extracted_text", TEXT)
    stored = conn.execute("SELECT extracted_text FROM link_text_fts WHERE rowid = 1").fetchone()
    assert "\u200b" in stored[0]
    # the same words again (as the next capture sends them): not a replaced text
    assert text_history._same(stored[0], TEXT)
    assert not text_history._same(stored[0], TEXT.replace("天気", "雨"))


def test_texts_stored_before_are_made_searchable_by_the_migration(tmp_path: Path) -> None:
    old = sqlite3.connect(tmp_path / "old.sqlite3", isolation_level=None)
    migrate(old, target=21)
    old.execute(
        "INSERT INTO links (original_url, normalized_url, canonical_url, domain,"
        " first_seen_at, last_seen_at) VALUES (?, ?, ?, 'news.example.jp', '2025-01-01',"
        " '2025-01-01')",
        (URL, URL, URL),
    )
    old.execute(
        "INSERT INTO link_text_fts (rowid, link_id, title, url, domain, extracted_text,"
        " media_text, post_text) VALUES (1, 1, ?, ?, 'news.example.jp', ?, NULL, 'plain words')",
        (TITLE, URL, TEXT),
    )
    old.execute(
        "INSERT INTO link_text_history (link_id, snapshot_id, captured_at, text)"
        " VALUES (1, 's1', '2025-01-01', '大阪の雨')"
    )
    before = "SELECT 1 FROM link_text_fts WHERE link_text_fts MATCH '\"天 気\"'"
    assert not old.execute(before).fetchall()
    old.close()

    conn = open_db(tmp_path / "old.sqlite3")
    found = conn.execute("SELECT rowid FROM link_text_fts WHERE link_text_fts MATCH '\"天 気\"'")
    assert [r[0] for r in found] == [1]
    older = conn.execute("SELECT link_id FROM link_text_history WHERE text MATCH '\"雨\"'")
    assert [r[0] for r in older] == [1]
    row = conn.execute("SELECT media_text, post_text FROM link_text_fts").fetchone()
    assert tuple(row) == (None, "plain words")  # NULL and other text untouched
