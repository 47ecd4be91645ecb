"""Words of the scripts written with combining marks (Devanagari, Bengali, Tamil ...) are
searched as whole words and highlighted as one (services/web/queries/words.py; writer and
web in process)."""

from __future__ import annotations

from pathlib import Path

import httpx

from services.web.state import WebState
from services.writer.db import open_db
from shared.hooks.records import ArchiveResultRecord, HookRecord, MetadataRecord, TextRecord
from testkit.writer_harness import FETCH_HOOK, Harness, done, event, occ, post
from tests.web.conftest import client_for, web_settings

PAGES = {
    "https://hi.example/greeting": ("नमस्ते दुनिया", "आज का मौसम अच्छा है और सब लोग खुश हैं"),
    # "नमस" and "त" apart: the fragments unicode61 makes of नमस्ते, not the word
    "https://hi.example/fragments": ("नमस कुछ और त", "यह एक अलग पन्ना है"),
    "https://bn.example/name": ("তোমার নাম কি", "কলকাতার আবহাওয়া ভালো"),
    "https://ta.example/hello": ("வணக்கம் உலகம்", "இன்று மழை பெய்யும்"),
}


async def found(client: httpx.AsyncClient, q: str) -> list[str]:
    resp = await client.get("/search.json", params={"q": q})
    assert resp.status_code == 200, resp.text
    return [r["url"] for r in resp.json()["results"]]


async def test_a_word_with_vowel_signs_is_found_whole(tmp_path: Path) -> None:
    h = Harness(open_db(tmp_path / "archive.sqlite3"))
    h.apply(post("g1", *(occ(url) for url in PAGES)))
    for job in [h.job(j.job_id) for j in h.dispatch()]:
        url = h.one("SELECT canonical_url FROM links WHERE id = ?", job["link_id"])
        title, text = PAGES[url]
        records: list[HookRecord] = [
            MetadataRecord(title=title),
            TextRecord(text=text),
            ArchiveResultRecord(status="succeeded", plugin="fetch", hook=FETCH_HOOK),
        ]
        h.apply(*(event(job, i, r) for i, r in enumerate(records)), done(job, records=3))
    h.conn.close()

    state = WebState.of(web_settings(tmp_path))
    async with client_for(state) as client:
        assert await found(client, "नमस्ते") == ["https://hi.example/greeting"]
        assert await found(client, "मौसम") == ["https://hi.example/greeting"]
        assert await found(client, "নাম") == ["https://bn.example/name"]
        assert await found(client, "আবহাওয়া") == ["https://bn.example/name"]
        assert await found(client, "வணக்கம்") == ["https://ta.example/hello"]
        assert await found(client, "மழை") == ["https://ta.example/hello"]
        resp = await client.get("/search.json", params={"q": "मौसम"})
        snippet = resp.json()["results"][0]["snippet"]
        page = (await client.get("/search", params={"q": "मौसम"})).text
    state.db.dispose()
    assert "<mark>मौसम</mark>" in snippet, snippet
    assert "<mark>मौसम</mark>" in page
