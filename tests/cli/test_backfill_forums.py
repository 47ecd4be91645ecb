"""`dla backfill` and per-forum provenance on the real stack (`dla up`: NATS, S3, the
poller, the writer, the web, the archiver) with two fixture Discourse forums in FEEDS."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from testkit.forum import (
    JSON,
    OWN_LINKS,
    QUOTED_LINKS,
    Post,
    linked_topic,
    posts_rss,
    serve_topic,
)
from testkit.httpserver import FixtureServer, Reply
from testkit.live_writer import writer_idle
from testkit.waiting import wait_for
from tests.cli.test_owner_cli import Up, dla_up, one_line_error

pytestmark = pytest.mark.integration

TOPIC = 7
TOPIC_POSTS = linked_topic(
    TOPIC, "https://news.example.org/a/{}", "https://quotes.example.org/q/{}"
)  # example.org is excluded: its links are recorded with their provenance, never captured
OWN, QUOTED = OWN_LINKS, QUOTED_LINKS


@dataclass
class Stack:
    up: Up
    a: FixtureServer
    b: FixtureServer

    def forum(self, server: FixtureServer) -> str:
        return f"127.0.0.1:{server.port}"

    def backlog_drained(self) -> bool:
        """Every message the writer was sent is applied (its consumers: none pending, none
        unacknowledged), asked of the stack's NATS from this process."""
        return asyncio.run(writer_idle(self.up.stack()["nats_url"]))

    def wait_drained(self) -> None:
        """Until backlog_drained (asked here, not through `dla status --json`: a `dla` run
        costs ~1 s of CPU a poll)."""
        wait_for(self.backlog_drained, 60, "the writer applying everything", interval=0.25)

    def counts(self) -> tuple[int, ...]:
        tables = ("discourse_posts", "link_occurrences", "links")
        return tuple(self.up.db(f"SELECT count(*) FROM {t}")[0][0] for t in tables)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("forums")
    with (
        FixtureServer("127.0.0.1") as a,
        FixtureServer("127.0.0.1") as b,
        FixtureServer("127.0.0.2") as pages,
    ):
        for name, server, post_id in (("a", a, 900), ("b", b, 901)):
            cooked = f'<p>look <a href="{pages.base}/page/{name}">here</a></p>'
            rss = posts_rss(server.base, [Post(post_id, 8, cooked)], host=f"{name}.test")
            rss_type = {"Content-Type": "application/rss+xml"}
            server.routes["/posts.rss"] = Reply(rss, headers=rss_type)
            page = f"<html><head><title>Page {name}</title></head><body>owl {name}</body></html>"
            pages.routes[f"/page/{name}"] = Reply(page.encode())
        serve_topic(a, TOPIC, TOPIC_POSTS)
        a.routes["/t/404.json"] = Reply(b'{"errors":["not found"]}', 404, JSON)
        a.routes["/t/403.json"] = Reply(b'{"error_type":"invalid_access"}', 403, JSON)
        a.routes["/t/500.json"] = Reply(b'{"post_stream": ', 200, JSON)
        env = {
            "FEEDS": f"{a.base}/posts.rss,{b.base}/posts.rss",
            "POLL_INTERVAL_SECONDS": "2",
            "EXCLUDE_DOMAINS": "example.org",
        }
        with dla_up(tmp, env, pages) as up:
            # the poller answers backfill requests from before its first poll
            wait_for(
                lambda: up.db("SELECT count(*) FROM discourse_posts")[0][0] == 2,
                60,
                "both feeds polled",
                ignore=(sqlite3.Error,),
            )
            yield Stack(up, a, b)


def test_backfill_records_every_post_of_a_topic_once(stack: Stack) -> None:
    topic = f"{stack.a.base}/t/lost-threads/{TOPIC}/3"
    first = stack.up.dla("backfill", topic)
    assert first.returncode == 0, first.stderr
    forum = stack.forum(stack.a)
    assert f"{forum}: 45 post(s) read, {len(OWN) + len(QUOTED)} link(s) found" in first.stdout

    def recorded() -> list[tuple[Any, ...]]:
        return stack.up.db(
            "SELECT p.guid, p.forum, p.feed_url, l.canonical_url, o.in_quote"
            " FROM discourse_posts p LEFT JOIN link_occurrences o ON o.discourse_post_id = p.id"
            " LEFT JOIN links l ON l.id = o.link_id WHERE p.topic_url LIKE ?",
            f"%/t/topic/{TOPIC}",
        )

    wait_for(lambda: len({r[0] for r in recorded()}) == 45, 60, "the topic's posts recorded")
    rows = recorded()
    assert {(guid, f, feed) for guid, f, feed, *_ in rows} == {
        (f"a.test-post-{100 + n}", forum, f"{stack.a.base}/posts.rss") for n in range(1, 46)
    }
    links = {(guid, url, quoted) for guid, _, _, url, quoted in rows if url}
    assert links == {
        (f"a.test-post-{100 + n}", f"https://news.example.org/a/{n}", 0) for n in OWN
    } | {(f"a.test-post-{100 + n}", f"https://quotes.example.org/q/{n}", 1) for n in QUOTED}
    stack.wait_drained()
    before = stack.counts()

    again = stack.up.dla("backfill", f"{stack.a.base}/t/{TOPIC}")
    assert again.returncode == 0, again.stderr
    assert "45 post(s) read" in again.stdout
    stack.wait_drained()
    assert stack.counts() == before


BAD_TOPICS = [
    ("/c/general/4", 7, "is not a topic URL"),
    ("/t/x/404", 5, "not found"),
    ("/t/x/403", 1, "private topic"),
    ("/t/x/500", 1, "not a JSON object"),
]
"""(path on forum a, exit code, words of the one-line error)."""


def test_a_bad_topic_is_one_line_an_exit_code_and_nothing_recorded(stack: Stack) -> None:
    # one test for the four: each case is a `dla` run, the waits for the writer are shared
    stack.wait_drained()
    before = stack.counts()
    for path, code, words in BAD_TOPICS:
        result = stack.up.dla("backfill", stack.a.base + path)
        assert result.returncode == code, (path, result.stderr)
        assert words in one_line_error(result), path
    stack.wait_drained()
    assert stack.counts() == before


def test_a_topic_of_a_forum_not_in_feeds_is_refused(stack: Stack) -> None:
    with FixtureServer() as elsewhere:
        serve_topic(elsewhere, TOPIC, TOPIC_POSTS)
        result = stack.up.dla("backfill", f"{elsewhere.base}/t/x/{TOPIC}")
        assert elsewhere.requests == []
    assert result.returncode == 7
    assert "is not a forum this archive watches" in one_line_error(result)


def search(up: Up, **params: str) -> dict[str, Any]:
    found: dict[str, Any] = up.http.get(f"{up.web}/search.json", params=params).json()
    return found


def test_every_where_posted_names_its_forum_and_lists_filter_by_it(stack: Stack) -> None:
    web = stack.up.web

    def listed(**params: str) -> dict[str, int]:
        links = stack.up.http.get(f"{web}/index.json", params=params).json()["links"]
        return {link["url"].rsplit("/", 1)[-1]: link["id"] for link in links}

    wait_for(lambda: len(listed()) == 2, 120, "both forums' links archived", interval=0.5)
    ids = listed()
    for name, server in (("a", stack.a), ("b", stack.b)):
        forum = stack.forum(server)
        detail = stack.up.http.get(f"{web}/links/{ids[name]}.json").json()
        assert [o["forum"] for o in detail["occurrences"]] == [forum]
        assert listed(forum=forum) == {name: ids[name]}
        page = stack.up.http.get(f"{web}/links/{ids[name]}").text
        assert f">{forum}</a>" in page
        shown = stack.up.dla("show", str(ids[name]))
        assert shown.returncode == 0 and "where posted" in shown.stdout and forum in shown.stdout
        ls = stack.up.dla("ls", "--forum", forum, "--json")
        assert [link["id"] for link in json.loads(ls.stdout)["links"]] == [ids[name]]
        wait_for(
            lambda: search(stack.up, q="owl")["total"] == 2,
            60,
            "both pages searchable",
            interval=0.5,
        )
        found = search(stack.up, q="owl", forum=forum)["results"]
        assert [r["link_id"] for r in found] == [ids[name]]
        assert [r["link_id"] for r in search(stack.up, forum=forum)["results"]] == [ids[name]]
        home = stack.up.http.get(f"{web}/", params={"forum": forum}).text
        assert f"Only links posted on {forum}" in home
        other = ids["b" if name == "a" else "a"]
        assert f"/links/{ids[name]}" in home and f"/links/{other}" not in home
    nowhere = stack.up.http.get(f"{web}/index.json", params={"forum": "nowhere.test"})
    assert nowhere.json()["links"] == []
