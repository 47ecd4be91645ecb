"""A platform link's post: `"post"` in /links/{id}.json (null for an ordinary page) with our
copies' URLs, and the link page's post card (author, time, text, images from our copies,
the parent and quoted posts, counts, "captured via"), never an image from the platform."""

from __future__ import annotations

import re

import httpx

from tests.web.archive import X_POST


async def test_the_json_twin_holds_the_post_with_our_copies(client: httpx.AsyncClient) -> None:
    link = (await client.get("/links/5.json")).json()
    assert link["status"] == "archived" and link["canonical_url"] == X_POST
    post = link["post"]
    assert post["platform"] == "x" and post["source"] == "syndication"
    assert post["author"] == {"name": "Ada Example", "handle": "ada_example", "id": "1001"}
    assert post["counts"] == {"likes": 1204, "reposts": 87, "replies": 31, "views": 40210}
    assert post["parent"]["author"]["handle"] == "brook_sample"
    assert post["quoted"]["text"].startswith("The harbour festival")
    urls = [m["file_url"] for m in post["media"]]
    assert len(urls) == 4 and all(re.fullmatch(r"/artifacts/\d+", u) for u in urls)
    assert post["captured"]["plugin"] == "x"
    assert (await client.get("/links/1.json")).json()["post"] is None


async def test_the_card_shows_the_post_from_our_copies_only(client: httpx.AsyncClient) -> None:
    page = (await client.get("/links/5", headers={"accept": "text/html"})).text
    card = page[page.index('<section class="post"') : page.index("</section>")]
    assert "Ada Example" in card and "@ada_example" in card and "2024-05-01" in card
    assert "Four pictures of the harbour at sunrise" in card
    assert "Replying to" in card and "Brook Sample" in card and "Cal Testwood" in card
    assert "1,204 likes · 87 reposts · 31 replies · 40,210 views" in card
    assert "captured via syndication" in card
    sources = re.findall(r'<img[^>]+src="([^"]+)"', card)
    assert len(sources) == 4 and all(s.startswith("/artifacts/") for s in sources)
    assert "pbs.twimg.com" not in "".join(re.findall(r"<img[^>]+>", page))
    assert page.index('<section class="post"') < page.index('class="shot"')
    assert "what the browser saw" in page
