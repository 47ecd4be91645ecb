"""Search: FTS over title, URL and text; user input is words, never FTS5 syntax."""

from __future__ import annotations

import httpx
import pytest

from services.web.queries.search import domain_phrase, fts_query


async def search(client: httpx.AsyncClient, **params: str) -> dict:
    resp = await client.get("/search.json", params=params)
    assert resp.status_code == 200, resp.text
    return resp.json()


async def test_finds_archived_text_title_and_url_with_highlights(client: httpx.AsyncClient) -> None:
    body = await search(client, q="sourdough")
    assert body["total"] == 2 and [r["link_id"] for r in body["results"]] == [4, 1]
    hit = body["results"][1]
    assert set(hit) >= {"link_id", "url", "title", "domain", "snippet"}
    assert "<mark>" in hit["snippet"] and "<img" not in hit["snippet"]
    assert (await search(client, q="Breadit"))["total"] == 1  # in the URL only
    assert (await search(client, q="Brot"))["total"] == 1  # in the title only


async def test_filters_compose(client: httpx.AsyncClient) -> None:
    assert [
        r["link_id"]
        for r in (await search(client, q="sourdough", domain="bücher.de".encode("idna").decode()))[
            "results"
        ]
    ] == [4]
    assert (await search(client, q="sourdough", domain="reddit.com"))["total"] == 1
    assert (await search(client, q="sourdough", domain="old.reddit.com"))["total"] == 1
    assert (await search(client, q="sourdough", domain="com"))["total"] == 1
    # FTS5 is narrowed by "reddit" only: the exact rule on links.domain turns these away
    assert (await search(client, q="sourdough", domain="reddit.de"))["total"] == 0
    assert (await search(client, q="sourdough", domain="eddit.com"))["total"] == 0
    assert (await search(client, q="sourdough", domain="d.reddit.com"))["total"] == 0
    assert (await search(client, q="sourdough", status="failed"))["total"] == 0
    assert (await search(client, q="sourdough", has_video="yes"))["total"] == 0
    assert (await search(client, q="sourdough", has_video="no"))["total"] == 2
    assert (await search(client, q="sourdough", since="2026-01-01", until="2026-01-01"))[
        "total"
    ] == 2
    assert (await search(client, q="sourdough", since="2026-01-02"))["total"] == 0
    relevance = await search(client, q="sourdough", sort="relevance", limit="1")
    assert len(relevance["results"]) == 1 and relevance["next"] == "1"
    rest = await search(client, q="sourdough", sort="relevance", limit="1", cursor="1")
    assert {relevance["results"][0]["link_id"], rest["results"][0]["link_id"]} == {1, 4}


async def test_pages_by_cursor(client: httpx.AsyncClient) -> None:
    first = await search(client, q="sourdough", limit="1")
    second = await search(client, q="sourdough", limit="1", cursor=first["next"])
    assert [first["results"][0]["link_id"], second["results"][0]["link_id"]] == [4, 1]
    assert second["next"] is None


@pytest.mark.parametrize(
    "q",
    ['"', '"sourdough', "sourdough AND", "OR sourdough", "sourdough*", "-sourdough", "NOT",
     "NEAR(sourdough", "title:sourdough", "(sourdough", "sourdough)", "^sourdough", "{x}",
     "'; DROP TABLE links; --", "\\", "\x00", "*", "a" * 500],
)  # fmt: skip
async def test_syntax_is_searched_as_words(client: httpx.AsyncClient, q: str) -> None:
    body = await search(client, q=q)
    if fts_query(q) == '"sourdough"':
        assert body["total"] == 2, q
    elif fts_query(q) == '"sourdough" "AND"':
        assert [r["link_id"] for r in body["results"]] == [1]


async def test_quoted_operators_are_words(client: httpx.AsyncClient) -> None:
    # "AND OR" and "javascript" appear as plain words in link 1's text.
    assert [r["link_id"] for r in (await search(client, q="AND OR javascript"))["results"]] == [1]


def test_domain_phrase_leaves_out_the_public_suffix() -> None:
    # the labels in front of the suffix narrow FTS5; links.domain then decides exactly
    assert domain_phrase("news.bbc.co.uk") == "news bbc"
    assert domain_phrase("bbc.co.uk") == "bbc"
    assert domain_phrase("xn--bcher-kva.de") == "xn bcher kva"
    assert domain_phrase("site7.example") == "site7"  # a TLD the list lacks is still a TLD
    assert domain_phrase("co.uk") == "co uk" and domain_phrase("com") == "com"  # all there is
    assert domain_phrase("10.0.0.1") == "10 0 0 1"
    assert domain_phrase("...") is None and domain_phrase("") is None


def test_fts_query_quotes_every_word() -> None:
    assert fts_query('say "hi" AND -x*') == '"say" "hi" "AND" "x"'
    assert fts_query("  ") is None and fts_query("***") is None
    assert fts_query("x", "old.reddit.com") == '"x" domain : "old reddit"'
    assert fts_query("x", "***") == '"x"'
    assert fts_query("x", '" OR') == '"x" domain : "OR"'
    assert (fts_query("x " * 100) or "").count('"x"') == 12


async def test_search_page_renders_highlights_safely(client: httpx.AsyncClient) -> None:
    page = await client.get("/search", params={"q": "sourdough"}, headers={"accept": "text/html"})
    assert page.status_code == 200 and "<mark>" in page.text
    assert "<img src=x" not in page.text and "<script>window" not in page.text
    empty = await client.get("/search", headers={"accept": "text/html"})
    assert (
        empty.status_code == 200
        and "result" not in empty.text.split("<main>")[1].split("</form>")[-1]
    )
