"""The admin console in-process (the writer's real apply path fills the database; no NATS,
so actions that get past every check answer 503): the login and its cookie, CSRF on every
form, expired and forged sessions, the login rate limit, the console disabled without a
token, a hidden link gone from every public route and back after an undo, the undo refused
after its window, the pages and the audit exports. Chromium and the whole path to the
writer: tests/web/test_console_browser.py."""

from __future__ import annotations

import csv
import io
import json
import re
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from services.web import admin_reads
from services.web.console import session
from services.web.state import WebState
from services.writer.db import open_db
from shared.hooks.records import ArchiveResultRecord
from shared.messages import ExcludeCommand, TakedownCommand, UndoTakedownCommand
from testkit.writer_harness import Harness, done, event, occ, post
from tests.web.conftest import client_for, web_settings
from tests.writer.test_moderation import broken_and_declined, captured

SECRET = "correct-horse-battery"
HTML = {"accept": "text/html"}
FORMS = (
    "/admin/takedowns/takedown",
    "/admin/takedowns/undo",
    "/admin/takedowns/exclude",
    "/admin/takedowns/include",
    "/admin/queue/retry",
    "/admin/queue/backfill",
    "/admin/liveness/check",
    "/admin/logout",
)
"""Every form the console posts."""
BEARER = {"authorization": f"Bearer {SECRET}"}


def archive(data: Path, *, taken_down_at: datetime | None = None) -> tuple[Harness, int]:
    """A database with one captured link (taken down at that time, when given)."""
    h = Harness(open_db(data / "archive.sqlite3"))
    job = captured(h)
    link_id = int(job["link_id"])
    if taken_down_at is not None:
        h.now = taken_down_at
        h.apply(
            TakedownCommand(
                link_id=link_id,
                reason="=HYPERLINK(court order)",
                admin="alice",
                request_id="t1",
                requested_at=taken_down_at,
            )
        )
    return h, link_id


@pytest.fixture
def tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADMIN_TOKENS", f"alice:{SECRET}")
    monkeypatch.delenv("ADMIN_TOKEN", raising=False)


async def client_of(data: Path, base: str = "http://archive.test") -> httpx.AsyncClient:
    state = WebState.of(web_settings(data))
    c = client_for(state)
    c.base_url = httpx.URL(base)
    return c


@pytest.fixture
async def held(
    tmp_path: Path, tokens: None
) -> AsyncIterator[tuple[httpx.AsyncClient, Harness, int]]:
    """A link taken down a moment ago (its undo window open), and a client."""
    h, link_id = archive(tmp_path, taken_down_at=datetime.now(UTC))
    async with await client_of(tmp_path) as c:
        yield c, h, link_id
    h.conn.close()


async def log_in(c: httpx.AsyncClient) -> str:
    """Log in; the CSRF token of the session's forms."""
    r = await c.post("/admin/login", data={"token": SECRET}, headers=HTML)
    assert r.status_code == 303 and r.headers["location"] == "/admin", r.text
    page = await c.get("/admin", headers=HTML)
    assert page.status_code == 200 and "Logged in as <strong>alice</strong>" in page.text
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found is not None
    return found.group(1)


async def test_with_no_admin_token_the_console_is_disabled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ADMIN_TOKEN", raising=False)
    monkeypatch.delenv("ADMIN_TOKENS", raising=False)
    archive(tmp_path)[0].conn.close()
    async with await client_of(tmp_path) as c:
        for method, path in (("GET", "/admin"), ("GET", "/admin/login"), ("POST", "/admin/login"),
                             ("GET", "/admin/takedowns"), ("GET", "/admin/audit.csv")):  # fmt: skip
            r = await c.request(method, path, headers=HTML, data={"token": "anything-at-all"})
            assert r.status_code == 403, (path, r.status_code)
            assert "ADMIN_TOKEN" in r.text


async def test_login_sets_a_strict_httponly_cookie_that_never_holds_the_token(
    held: tuple[httpx.AsyncClient, Harness, int],
) -> None:
    c, _, _ = held
    r = await c.get("/admin", headers=HTML)
    assert (r.status_code, r.headers["location"]) == (303, "/admin/login")
    r = await c.post("/admin/login", data={"token": "not-the-token"}, headers=HTML)
    assert r.status_code == 401 and "not a valid admin token" in r.text
    assert "set-cookie" not in r.headers
    r = await c.post("/admin/login", data={"token": SECRET}, headers=HTML)
    cookie = r.headers["set-cookie"]
    assert r.status_code == 303
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/admin" in cookie
    assert "Secure" not in cookie  # plain http here; https below
    assert SECRET not in cookie and "token" not in str(r.url)
    assert (await c.get("/admin", headers=HTML)).status_code == 200


async def test_over_https_the_cookie_is_secure(tmp_path: Path, tokens: None) -> None:
    archive(tmp_path)[0].conn.close()
    async with await client_of(tmp_path, "https://archive.test") as c:
        r = await c.post("/admin/login", data={"token": SECRET}, headers=HTML)
    assert r.status_code == 303 and "Secure" in r.headers["set-cookie"]


async def test_every_form_needs_the_sessions_csrf_token(
    held: tuple[httpx.AsyncClient, Harness, int],
) -> None:
    c, _, link_id = held
    form = {"link_id": str(link_id), "reason": "spam"}
    r = await c.post("/admin/takedowns/takedown", data=form, headers=HTML)
    assert (r.status_code, r.headers["location"]) == (303, "/admin/login")  # not logged in
    csrf = await log_in(c)
    for given in ({}, {"csrf": "forged"}, {"csrf": csrf[:-1] + "x"}):
        for path in FORMS:
            r = await c.post(path, data=form | given, headers=HTML)
            assert r.status_code == 403 and "CSRF" in r.text, (path, r.status_code)
    # another session's token is not this one's
    other = session.verify(
        session.issue("alice", SECRET, time.time()), {"alice": SECRET}, time.time()
    )
    assert other is not None
    other_csrf = session.csrf_token(other, {"alice": SECRET})
    r = await c.post("/admin/takedowns/takedown", data=form | {"csrf": other_csrf}, headers=HTML)
    assert r.status_code == 403
    # the right token gets through to the action: no message bus here, so a 503 in words
    r = await c.post("/admin/takedowns/takedown", data=form | {"csrf": csrf}, headers=HTML)
    assert r.status_code == 503 and "cannot take requests right now" in r.text
    r = await c.post("/admin/takedowns/takedown", data={"link_id": "x", "csrf": csrf}, headers=HTML)
    assert r.status_code == 400 and "link&#39;s id" in r.text
    r = await c.post("/admin/logout", data={"csrf": csrf}, headers=HTML)
    assert (r.status_code, r.headers["location"]) == (303, "/admin/login?out=1")
    assert (await c.get("/admin", headers=HTML)).status_code == 303


async def test_an_expired_or_forged_session_goes_back_to_the_login(
    held: tuple[httpx.AsyncClient, Harness, int],
) -> None:
    c, _, _ = held
    expired = session.issue("alice", SECRET, time.time() - session.SESSION_SECONDS - 1)
    c.cookies.set(session.COOKIE, expired, domain="archive.test", path="/admin")
    r = await c.get("/admin", headers=HTML)
    assert (r.status_code, r.headers["location"]) == (303, "/admin/login?expired=1")
    page = await c.get("/admin/login?expired=1", headers=HTML)
    assert "session expired" in page.text
    good = session.issue("alice", SECRET, time.time())
    parts = good.split(".")
    for forged in (
        ".".join([parts[0], "Ym9i", *parts[2:]]),  # another name
        ".".join([parts[0], parts[1], str(int(parts[2]) + 99999), *parts[3:]]),  # longer life
        session.issue("alice", "not-the-secret", time.time()),
        "junk",
        "v1.%%%.1.2.3",
    ):
        c.cookies.set(session.COOKIE, forged, domain="archive.test", path="/admin")
        r = await c.get("/admin/audit", headers=HTML)
        assert r.status_code == 303, forged
        assert (await c.get("/admin/audit.csv")).status_code == 401


async def test_wrong_tokens_are_rate_limited_per_address(
    held: tuple[httpx.AsyncClient, Harness, int],
) -> None:
    c, _, _ = held
    codes = [
        (await c.post("/admin/login", data={"token": f"wrong-{n}"}, headers=HTML)).status_code
        for n in range(11)
    ]
    assert codes == [401] * 10 + [429]
    r = await c.post("/admin/login", data={"token": SECRET}, headers=HTML)
    assert r.status_code == 429 and int(r.headers["retry-after"]) > 0  # even the right one


async def test_a_hidden_link_is_gone_from_every_route_and_an_undo_brings_it_back(
    held: tuple[httpx.AsyncClient, Harness, int],
) -> None:
    c, h, link_id = held
    artifact = h.one("SELECT id FROM archive_artifacts")

    async def shown() -> dict[str, bool]:
        search = await c.get("/search.json", params={"q": "owls"})
        export = await c.get("/export/links.jsonl")
        return {
            "page": (await c.get(f"/links/{link_id}", headers=HTML)).status_code == 200,
            "json": (await c.get(f"/links/{link_id}.json")).status_code == 200,
            "search": any(r["link_id"] == link_id for r in search.json()["results"]),
            "export": any(json.loads(x)["id"] == link_id for x in export.text.splitlines()),
            "feed": f"/links/{link_id}</link>" in (await c.get("/feed.xml")).text,
            # (visible: 503, this test's S3 is down; hidden: 404)
            "artifact": (await c.get(f"/artifacts/{artifact}")).status_code != 404,
        }

    assert set((await shown()).values()) == {False}
    h.now = datetime.now(UTC)
    h.apply(
        UndoTakedownCommand(link_id=link_id, admin="alice", request_id="u1", requested_at=h.now)
    )
    assert set((await shown()).values()) == {True}


async def test_an_undo_after_the_window_is_refused_in_words(tmp_path: Path, tokens: None) -> None:
    h, link_id = archive(tmp_path, taken_down_at=datetime(2026, 1, 1, tzinfo=UTC))
    h.conn.close()
    async with await client_of(tmp_path) as c:
        r = await c.post(f"/admin/links/{link_id}/undo", json={}, headers=BEARER)
        assert r.status_code == 409
        assert "undo window (TAKEDOWN_UNDO_DAYS) ended at 2026-01-08" in r.json()["error"]
        r = await c.post("/admin/links/99/undo", json={}, headers=BEARER)
        assert (r.status_code, r.json()["error"]) == (409, "no link 99")
        r = await c.post("/admin/check", json={"link": "x" * 5000}, headers=BEARER)
        assert r.status_code == 404  # what was typed is shown, shortened
        assert r.json()["error"].startswith("no link 'xxx") and len(r.json()["error"]) < 160
        csrf = await log_in(c)
        form = {"link_id": str(link_id), "csrf": csrf}
        r = await c.post("/admin/takedowns/undo", data=form, headers=HTML)
        assert r.status_code == 409 and "undo window (TAKEDOWN_UNDO_DAYS) ended" in r.text
        assert "Takedowns &amp; exclusions" in r.text  # the page again, with the refusal


async def test_the_pages_and_the_audit_exports(
    held: tuple[httpx.AsyncClient, Harness, int],
) -> None:
    c, _, link_id = held
    await log_in(c)
    for path in ("/admin", "/admin/failures", "/admin/liveness", "/admin/audit?before=5"):
        r = await c.get(path, headers=HTML)
        assert r.status_code == 200 and "<script" not in r.text, path
    page = (await c.get("/admin/takedowns", headers=HTML)).text
    assert "hidden; undo possible for 6 days 23 h" in page
    assert 'action="/admin/takedowns/undo"' in page
    audit = (await c.get("/admin/audit", headers=HTML)).text
    assert "=HYPERLINK(court order)" in audit and "takedown" in audit
    # the exports, with the session (the console's links) and with the bearer token (dla)
    for headers in ({}, BEARER):
        rows = list(
            csv.reader(io.StringIO((await c.get("/admin/audit.csv", headers=headers)).text))
        )
        assert rows[0][:4] == ["id", "at", "admin", "action"]
        assert rows[1][2:6] == ["alice", "takedown", f"link {link_id}", "'=HYPERLINK(court order)"]
        lines = (await c.get("/admin/audit.jsonl", headers=headers)).text.splitlines()
        assert json.loads(lines[0])["reason"] == "=HYPERLINK(court order)"
    assert (await c.get("/admin/audit.xml", headers=BEARER)).status_code == 404
    listed = (await c.get("/admin/takedowns.json", headers=BEARER)).json()["takedowns"]
    assert [(t["link_id"], t["state"]) for t in listed] == [(link_id, "hidden")]
    assert 6 * 86400 < listed[0]["seconds_left"] <= 7 * 86400
    # the JSON routes take the bearer token only, never the console's cookie
    r = await c.get("/admin/takedowns.json")
    assert r.status_code == 401


def test_the_console_sends_no_command_of_its_own() -> None:
    """Its forms call the JSON routes' functions (`admin_actions`): it publishes nothing and
    names no subject itself."""
    from services.web.console import routes

    names = set(vars(routes))
    assert "publish" not in names and not any(n.startswith("CMD_") for n in names)
    assert vars(routes)["actions"].__name__ == "services.web.admin_actions"


async def test_an_exclusion_is_lifted_from_its_row_only_if_an_admin_made_it(
    held: tuple[httpx.AsyncClient, Harness, int],
) -> None:
    c, h, _ = held
    h.apply(
        ExcludeCommand(
            domain="spam.example", reason="spam", admin="alice", request_id="e1", requested_at=h.now
        )
    )
    r = await c.post("/admin/include", json={"domain": "other.example"}, headers=BEARER)
    assert r.status_code == 409 and "other.example is not excluded by an admin" in r.json()["error"]
    r = await c.post("/admin/include", json={"domain": "Spam.Example."}, headers=BEARER)
    assert r.status_code == 503  # checked and sent on: no message bus here
    csrf = await log_in(c)
    page = (await c.get("/admin/takedowns", headers=HTML)).text
    assert 'action="/admin/takedowns/include"' in page
    assert 'name="domain" value="spam.example"' in page
    form = {"domain": "web.archive.org", "csrf": csrf}  # EXCLUDE_DOMAINS', not an admin's
    r = await c.post("/admin/takedowns/include", data=form, headers=HTML)
    assert r.status_code == 409 and "EXCLUDE_DOMAINS" in r.text
    r = await c.post(
        "/admin/takedowns/include", data=form | {"domain": "spam.example"}, headers=HTML
    )
    assert r.status_code == 503 and "cannot take requests right now" in r.text


async def test_excluding_a_public_suffix_is_refused_as_a_slip(
    held: tuple[httpx.AsyncClient, Harness, int],
) -> None:
    """`com` or `co.uk` would stop every site under it: refused, with what to give instead,
    from the API and the console's form alike; a site's domain under them is taken."""
    c, _, _ = held
    for suffix in ("com", "CO.UK."):
        r = await c.post("/admin/exclude", json={"domain": suffix, "reason": "r"}, headers=BEARER)
        name = suffix.lower().rstrip(".")
        assert r.status_code == 400 and f"{name} is a public suffix" in r.json()["error"]
        assert f"example.{name}" in r.json()["error"]
    r = await c.post("/admin/exclude", json={"domain": "spam.co.uk", "reason": "r"}, headers=BEARER)
    assert r.status_code == 503  # checked and sent on: no message bus here
    csrf = await log_in(c)
    form = {"domain": "com", "reason": "r", "csrf": csrf}
    r = await c.post("/admin/takedowns/exclude", data=form, headers=HTML)
    assert r.status_code == 400 and "com is a public suffix" in r.text


def test_the_queue_counts_as_failed_what_a_retry_would_queue(tmp_path: Path) -> None:
    """A link whose page asked not to be archived is no failed link of its domain (a retry
    leaves it alone: tests/writer/test_moderation.py); the Failures page marks its code."""
    h = Harness(open_db(tmp_path / "archive.sqlite3"))
    broken_and_declined(h)
    assert [(d["domain"], d["failed"]) for d in admin_reads.by_domain(h.conn)] == [("a.example", 1)]
    declined = {f["error_code"]: f["declined"] for f in admin_reads.failures_by_code(h.conn)}
    assert declined == {"E_NAVIGATE_HTTP_404": False, "E_NAVIGATE_DECLINED": True}
    queue = admin_reads.queue(h.conn, datetime.now(UTC))
    assert queue["jobs"]["failed"] == 2 and queue["declined_jobs"] == 1


async def test_the_retry_of_every_failed_link_is_offered_when_one_failed(
    tmp_path: Path, tokens: None
) -> None:
    h = Harness(open_db(tmp_path / "archive.sqlite3"))
    broken_and_declined(h)
    h.conn.close()
    async with await client_of(tmp_path) as c:
        await log_in(c)
        page = (await c.get("/admin", headers=HTML)).text
    assert "Retry every failed link" in page and "Retry a.example" in page
    empty = tmp_path / "empty"
    empty.mkdir()
    open_db(empty / "archive.sqlite3").close()
    async with await client_of(empty) as c:
        await log_in(c)
        page = (await c.get("/admin", headers=HTML)).text
    assert "Nothing running, waiting or failed." in page
    assert "Retry every failed link" not in page


async def test_the_queue_shows_each_feeds_health_from_nats(
    tmp_path: Path, tokens: None, nats_url: str
) -> None:
    """What the poller stored (shared.feed_health) on the console's queue page and in
    /admin/queue.json, failing feeds first; without NATS the page says the state is
    unavailable instead of failing."""
    from shared import bus, feed_health

    archive(tmp_path)[0].conn.close()
    nc = await bus.connect(nats_url, "test-web-feeds")
    try:
        kv = await feed_health.bucket(nc.jetstream())
        at = datetime(2026, 11, 30, 14, 0, tzinfo=UTC)
        reports = {
            "https://forum.example/posts.rss": feed_health.FeedHealthReport(
                feed="https://forum.example/posts.rss", ok=True, polled_at=at, last_success=at
            ),
            "https://gone.example/posts.rss": feed_health.FeedHealthReport(
                feed="https://gone.example/posts.rss", ok=False, polled_at=at, failing_since=at,
                failures=3, error="http_status: HTTP 404 from https://gone.example/posts.rss",
            ),
            "https://busy.example/posts.rss": feed_health.FeedHealthReport(
                feed="https://busy.example/posts.rss", ok=False, polled_at=at, failing_since=at,
                failures=1, error="http_status: HTTP 429 from https://busy.example/posts.rss",
                wait_until=datetime(2026, 11, 30, 15, 0, tzinfo=UTC),
            ),
        }  # fmt: skip
        for url, report in reports.items():
            await feed_health.save(kv, url, report)
        state = WebState.of(web_settings(tmp_path))
        async with client_for(state) as c:
            state.nc = nc
            queue = (await c.get("/admin/queue.json", headers=BEARER)).json()
            assert [(f["feed"], f["ok"], f["failures"]) for f in queue["feeds"]] == [
                ("https://busy.example/posts.rss", False, 1),
                ("https://gone.example/posts.rss", False, 3),
                ("https://forum.example/posts.rss", True, 0),
            ]
            await log_in(c)
            page = (await c.get("/admin", headers=HTML)).text
            assert "https://gone.example/posts.rss" in page and "failing" in page
            assert "http_status: HTTP 404" in page
            assert page.count("the forum asked us to wait") == 1 and "next poll" in page
            state.nc = None
            page = (await c.get("/admin", headers=HTML)).text
            assert "The feeds' state is unavailable" in page
            assert (await c.get("/admin/queue.json", headers=BEARER)).json()["feeds"] is None
    finally:
        await nc.close()


async def test_a_site_that_asked_us_to_slow_down_shows_as_paused(
    tmp_path: Path, tokens: None
) -> None:
    """Its waiting links wait for the back-off, not for a worker: the queue page says so on
    each of its hosts' rows, /admin/queue.json lists it (`dla status` prints it)."""
    h = Harness(open_db(tmp_path / "archive.sqlite3"), now=datetime.now(UTC))
    h.apply(post("g1", occ("https://www.example.org/a"), occ("https://news.example.org/b")))
    first, _ = h.dispatch(per_domain=2)
    job = h.job(first.job_id)
    hook = "on_Snapshot__41_fetch.py"
    limited = ArchiveResultRecord(status="failed", plugin="fetch", hook=hook,
                                  error_code="E_FETCH_HTTP_429", retry_after_s=3600)  # fmt: skip
    h.apply(event(job, 0, limited), done(job, records=1, retry=[hook]))
    rows = {d["domain"]: d for d in admin_reads.by_domain(h.conn, now=h.now)}
    assert {d: bool(r["paused_until"]) for d, r in rows.items()} == {
        "www.example.org": True,
        "news.example.org": True,
    }
    h.conn.close()
    async with await client_of(tmp_path) as c:
        (pause,) = (await c.get("/admin/queue.json", headers=BEARER)).json()["domains_backing_off"]
        assert (pause["domain"], pause["hits"]) == ("example.org", 1)
        assert "E_FETCH_HTTP_429" in pause["reason"]
        await log_in(c)
        page = (await c.get("/admin", headers=HTML)).text
    assert page.count('<span class="badge bad">paused</span>') == 2
    assert "in 59 min" in page or "in 1 h" in page
