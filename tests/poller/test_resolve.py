"""Short links are resolved by following redirects, then canonicalised (the writer decides on
the final URL)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from services.poller.resolve import Resolver
from shared.messages import LinkOccurrence
from testkit.httpserver import FixtureServer, Reply


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=5) as c:
        yield c


def short(url: str) -> LinkOccurrence:
    return LinkOccurrence(
        original_url=url, normalized_url=url, canonical_url=url, domain="127.0.0.3",
        needs_resolve=True,
    )  # fmt: skip


async def test_short_link_to_reddit_becomes_old_reddit(client: httpx.AsyncClient) -> None:
    with FixtureServer("127.0.0.3") as s:
        target = "https://www.reddit.com/r/sub/comments/abc/title/?utm_source=share"
        s.routes["/abc"] = Reply(b"", 301, {"Location": target})
        occ = await Resolver(client, allow_private=True).resolve(short(f"{s.base}/abc"))
    assert occ.canonical_url == "https://old.reddit.com/r/sub/comments/abc/title/"
    assert occ.domain == "old.reddit.com" and occ.final_url == target
    assert not occ.needs_resolve and occ.original_url == f"{s.base}/abc"
    assert [p for p, _ in s.requests] == ["/abc"], "the final site is not requested"


async def test_short_link_to_any_page_gets_its_final_canonical_url(
    client: httpx.AsyncClient,
) -> None:
    with FixtureServer("127.0.0.3") as s:
        s.routes["/x"] = Reply(b"", 302, {"Location": "https://blog.example.org/post?fbclid=1"})
        occ = await Resolver(client, allow_private=True).resolve(short(f"{s.base}/x"))
    assert (occ.canonical_url, occ.domain) == ("https://blog.example.org/post", "blog.example.org")


async def test_head_refused_falls_back_to_get(client: httpx.AsyncClient) -> None:
    with FixtureServer("127.0.0.3") as s:
        # the fixture server only implements GET: HEAD answers 501
        s.routes["/g"] = Reply(b"", 302, {"Location": "https://x.com/a/status/1"})
        occ = await Resolver(client, allow_private=True).resolve(short(f"{s.base}/g"))
    assert occ.canonical_url == "https://x.com/a/status/1"


async def test_unresolvable_links_are_kept_unchanged(client: httpx.AsyncClient) -> None:
    from services.supervisor.children import free_ports

    (port,) = free_ports(1, "127.0.0.3")
    dead = short(f"http://127.0.0.3:{port}/gone")
    assert await Resolver(client, allow_private=True).resolve(dead) == dead
    with FixtureServer("127.0.0.3") as s:
        s.routes["/r"] = Reply(b"", 302, {"Location": "https://x.com/a/status/3"})
        refused = short(f"{s.base}/r")
        assert await Resolver(client, allow_private=False).resolve(refused) == refused
    assert not s.requests, "production mode sends nothing to a private address"


async def test_answers_are_cached(client: httpx.AsyncClient) -> None:
    with FixtureServer("127.0.0.3") as s:
        s.routes["/c"] = Reply(b"", 302, {"Location": "https://x.com/a/status/2"})
        resolver = Resolver(client, allow_private=True)
        for _ in range(3):
            await resolver.resolve(short(f"{s.base}/c"))
    assert len(s.requests) == 1
