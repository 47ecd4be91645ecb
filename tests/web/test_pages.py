"""Pages and JSON twins over a filled archive (in-process; S3 and NATS are absent)."""

from __future__ import annotations

import re

import httpx

from tests.web.archive import HOSTILE_TITLE


async def test_home_lists_archives_newest_first_and_never_skipped_links(
    client: httpx.AsyncClient,
) -> None:
    body = (await client.get("/index.json")).json()
    assert [link["id"] for link in body["links"]] == [4, 5, 2, 1]
    assert body["next"] is None
    first = body["links"][3]
    assert set(first) >= {"id", "url", "title", "domain", "status", "last_archived_at", "artifacts"}
    assert first["title"] == HOSTILE_TITLE
    assert {a["kind"] for a in first["artifacts"]} == {
        "screenshot",
        "raw_response",
        "article",
        "article_image",
    }
    shot = next(a for a in first["artifacts"] if a["kind"] == "screenshot")
    assert set(shot) >= {"kind", "url", "sha256", "bytes", "content_type"}
    assert shot["url"] == f"/artifacts/{shot['id']}" and shot["content_type"] == "image/png"


async def test_a_404_capture_is_shown_as_failed_with_its_code(client: httpx.AsyncClient) -> None:
    links = {link["id"]: link for link in (await client.get("/index.json")).json()["links"]}
    assert links[2]["status"] == "failed" and links[2]["error_code"] == "E_FETCH_HTTP_404"
    assert links[2]["status_label"] == "failed · HTTP 404"
    page = (await client.get("/", headers={"accept": "text/html"})).text
    assert "failed · HTTP 404" in page
    assert "example.com" not in page  # the skipped link is not an archive


async def test_cursor_pages_cover_every_listed_link_once(client: httpx.AsyncClient) -> None:
    seen, cursor = [], None
    while True:
        params = {"limit": "1"} | ({"cursor": cursor} if cursor else {})
        body = (await client.get("/index.json", params=params)).json()
        seen += [link["id"] for link in body["links"]]
        cursor = body["next"]
        if cursor is None:
            break
    assert seen == [4, 5, 2, 1]
    html = await client.get("/", params={"limit": "1"}, headers={"accept": "text/html"})
    assert "Older →" in html.text


async def test_link_json_has_urls_provenance_snapshots_and_attempts(
    client: httpx.AsyncClient,
) -> None:
    link = (await client.get("/links/1.json")).json()
    assert (
        link["canonical_url"] == "https://old.reddit.com/r/Breadit/comments/x1/sourdough_starter/"
    )
    assert link["original_url"].startswith("https://www.reddit.com/")
    assert link["normalized_url"] and "final_url" in link and "aliases" in link
    assert set(link["metadata"]) == {
        "title", "description", "author", "published_at", "site_name", "language",
    }  # fmt: skip
    assert link["metadata"]["author"] == "u/baker"
    occ = link["occurrences"]
    assert {o["in_quote"] for o in occ} == {True, False}
    assert set(occ[0]) >= {"post_url", "author", "in_quote", "snippet", "seen_at"}
    (snap,) = link["snapshots"]
    assert set(snap) >= {"id", "status", "started_at", "results", "artifacts"}
    assert snap["status"] == "succeeded"
    assert {r["plugin"] for r in snap["results"]} == {"fetch", "metadata"}
    assert set(snap["results"][0]) >= {"plugin", "status", "error", "attempt"}
    assert len(snap["artifacts"]) == 4
    failed = (await client.get("/links/2.json")).json()["snapshots"][0]["results"][0]
    assert failed["error"] == "HTTP 404 Not Found" and failed["error_code"] == "E_FETCH_HTTP_404"


async def test_link_page_escapes_archived_text_and_shows_the_plain_text_reader(
    client: httpx.AsyncClient,
) -> None:
    page = await client.get("/links/1", headers={"accept": "text/html"})
    assert page.status_code == 200
    assert "<script>window.__pwned" not in page.text and "<img src=x" not in page.text
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt; Sourdough" in page.text
    assert "Reader view" in page.text and "Feeding a sourdough starter" in page.text
    assert 'src="/artifacts/1"' in page.text  # the screenshot, inline
    csp = page.headers["content-security-policy"]
    assert "script-src" not in csp and "default-src 'none'" in csp
    assert page.headers["x-frame-options"] == "DENY"


async def test_archived_words_take_their_own_direction(client: httpx.AsyncClient) -> None:
    """A Hebrew or Arabic title, description, reader view or snippet reads right to left
    (its punctuation at its end), an English one left to right: each has dir="auto"."""
    page = (await client.get("/links/1", headers={"accept": "text/html"})).text
    assert '<h1 dir="auto">' in page and '<div class="prose' in page
    assert all('dir="auto"' in tag for tag in re.findall(r'<div class="prose[^>]*>', page))
    listing = (await client.get("/", headers={"accept": "text/html"})).text
    titles = re.findall(r'<a class="item-title"[^>]*>', listing)
    assert titles and all('dir="auto"' in t for t in titles)
    found = (await client.get("/search", params={"q": "sourdough"})).text
    snippets = re.findall(r'<p class="snippet"[^>]*>', found)
    assert snippets and all('dir="auto"' in s for s in snippets)


async def test_idn_domains_read_in_unicode(client: httpx.AsyncClient) -> None:
    page = (await client.get("/", headers={"accept": "text/html"})).text
    assert "bücher.de" in page


async def test_stats_and_its_twin(client: httpx.AsyncClient) -> None:
    stats = (await client.get("/stats.json")).json()
    assert stats["links"]["by_status"] == {"archived": 3, "failed": 1, "skipped": 1}
    assert stats["links"]["declined"] == 0  # the failed one is a 404
    assert {d["domain"] for d in stats["domains"]} == {
        "old.reddit.com",
        "x.com",
        "xn--bcher-kva.de",
    }
    assert stats["failures"] == [
        {"error_code": "E_FETCH_HTTP_404", "results": 1, "links": 1, "declined": False}
    ]
    assert set(stats["backlog"]) == {"queued", "running", "oldest_queued_at"}
    page = await client.get("/stats", headers={"accept": "text/html"})
    assert page.status_code == 200 and "E_FETCH_HTTP_404" in page.text


async def test_exports_and_feed(client: httpx.AsyncClient) -> None:
    import json
    from xml.etree import ElementTree as ET

    export = await client.get("/export/links.jsonl")
    rows = [json.loads(line) for line in export.text.splitlines()]
    assert [r["id"] for r in rows] == [1, 2, 4, 5]
    assert rows[0]["metadata"]["author"] == "u/baker"
    feed = ET.fromstring((await client.get("/feed.xml")).content)
    titles = [t.text for t in feed.iter("title")]
    assert HOSTILE_TITLE in titles and "Brot backen" in titles
    assert len(list(feed.iter("item"))) == 3  # the failed link is not a new archive


async def test_api_docs_work_without_external_assets(client: httpx.AsyncClient) -> None:
    page = await client.get("/api/docs", headers={"accept": "text/html"})
    assert page.status_code == 200 and "/search.json" in page.text
    assert "<script" not in page.text and "cdn" not in page.text.lower()
    schema = (await client.get("/openapi.json")).json()
    responses = schema["paths"]["/search.json"]["get"]["responses"]
    assert "422" not in responses and "400" in responses


async def test_before_the_writer_created_the_database(tmp_path) -> None:
    from services.web.state import WebState
    from tests.web.conftest import client_for, web_settings

    async with client_for(WebState.of(web_settings(tmp_path))) as c:
        assert (await c.get("/index.json")).json() == {"links": [], "next": None}
        assert "Nothing archived yet" in (await c.get("/", headers={"accept": "text/html"})).text
        assert (await c.get("/links/1.json")).status_code == 404
        assert (await c.get("/search.json", params={"q": "x"})).json()["total"] == 0


def test_the_listing_pages_are_read_from_the_listing_index(archive) -> None:
    """The newest page and its cursor pages walk links_listed in order (no sort of every
    listed link), with or without ANALYZE statistics and a forum filter: the plan of the
    very SQL text the page runs, whose values are bound parameters."""
    import itertools
    import sqlite3

    from services.web.queries import links as lq

    conn = sqlite3.connect(archive / "archive.sqlite3")
    values = {"limit": 51, "at": "2026-01-01T12:00:00.000000Z", "link_id": 2, "forum": "f.test"}
    for analyze in (False, True):
        if analyze:
            conn.execute("ANALYZE")
        for after_cursor, forum in itertools.product((False, True), (False, True)):
            query = lq.recent_query(after_cursor, forum)
            rows = conn.execute("EXPLAIN QUERY PLAN " + query.sql, query.args(values))
            plan = " ".join(r[3] for r in rows)
            assert "USING INDEX links_listed" in plan and "TEMP B-TREE" not in plan, plan
    conn.close()


def test_esc_escapes_as_markupsafe_does() -> None:
    from markupsafe import escape

    from services.web.present import esc

    for value in ["a&b<c>\"d'e", "plain", "ünï©ode <b>", "&amp;", "", 7, None]:
        assert esc(value) == str(escape(value)), value


def test_a_list_item_escapes_every_field_and_keeps_only_http_links() -> None:
    from html.parser import HTMLParser

    from services.web.present import link_item

    hostile = '"><script>alert(1)</script><img src=x onerror=alert(2)>'
    item = link_item(
        {
            "id": 7,
            "url": f"javascript:alert(3)//{hostile}",
            "title": hostile,
            "domain": hostile,
            "status": "failed",
            "error_code": hostile,
            "first_seen_at": hostile,
            "last_archived_at": None,
            "artifacts": [{"kind": "screenshot"}],
            "quoted": True,
        },
        snippet=f"\x02{hostile}\x03",
    )
    tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            tags.append((tag, attrs))

    Tags().feed(str(item))
    assert {t for t, _ in tags} == {"li", "div", "time", "span", "a", "p", "mark"}
    assert all(not name.startswith("on") for _, attrs in tags for name, _ in attrs)
    hrefs = [v for _, attrs in tags for k, v in attrs if k == "href"]
    assert hrefs == ["/links/7", "#"]
    assert 'class="badge badge-screenshot"' in item and 'class="badge badge-quoted"' in item


def test_a_published_date_is_shown_as_precisely_as_the_page_gave_it() -> None:
    from services.web.present import published_time

    assert published_time("2019-05-03") == "2019-05-03"  # a day, not "2019-05-03 00:00 UTC"
    assert published_time("20190503") == "2019-05-03"
    assert published_time("2019") == "2019"
    assert published_time("May 2019") == "May 2019"
    assert published_time("2019-05-03T23:30:00-05:00") == "2019-05-04 04:30 UTC"
    assert published_time("2019-05-03 10:00") == "2019-05-03 10:00 UTC"
    assert published_time("12:00 somewhere") == "12:00 somewhere"
    assert published_time(None) == ""
