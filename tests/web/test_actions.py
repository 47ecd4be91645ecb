"""Submit and re-archive against a real nats-server: 202 + status URL, rate limits, token."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from services.web.state import WebState
from shared import bus
from shared.messages import SubmitCommand
from shared.subjects import CMD_REARCHIVE, CMD_SUBMIT, COMMANDS
from testkit.writer_harness import Harness
from tests.web.conftest import client_for, web_settings

pytestmark = pytest.mark.integration


async def connected(state: WebState, nats_url: str) -> WebState:
    state.nc = await bus.connect(nats_url, "web-test", connect_timeout=10)
    await bus.ensure_streams(state.nc.jetstream())
    return state


@pytest.fixture
async def live(archive: Path, nats_url: str) -> AsyncIterator[httpx.AsyncClient]:
    state = await connected(WebState.of(web_settings(archive, actions_per_client=4)), nats_url)
    async with client_for(state) as c:
        c.state = state  # type: ignore[attr-defined]
        yield c
    assert state.nc is not None
    await state.nc.close()


async def last_command(c: httpx.AsyncClient, subject: str) -> dict:
    js = c.state.nc.jetstream()  # type: ignore[attr-defined]
    msg = await js.get_last_msg(COMMANDS.name, subject)
    return json.loads(msg.data)


async def test_submit_publishes_and_answers_202_with_a_status_url(live: httpx.AsyncClient) -> None:
    resp = await live.post("/submit", json={"url": "https://www.reddit.com/r/a/comments/z9/"})
    assert resp.status_code == 202, resp.text
    body = resp.json()
    assert len(body["request_id"]) == 32
    assert body["status_url"] == f"/submissions/{body['request_id']}.json"
    assert body["url"] == "https://old.reddit.com/r/a/comments/z9/"
    sent = await last_command(live, CMD_SUBMIT)
    assert sent["request_id"] == body["request_id"]
    pending = (await live.get(body["status_url"])).json()
    assert pending["state"] == "pending"


async def test_a_form_submission_is_sent_to_its_status_page(live: httpx.AsyncClient) -> None:
    resp = await live.post(
        "/submit", data={"url": "https://x.com/a/status/2"}, headers={"accept": "text/html"}
    )
    assert resp.status_code == 303 and resp.headers["location"].startswith("/submissions/")
    page = await live.get(resp.headers["location"], headers={"accept": "text/html"})
    assert page.status_code == 200 and "Waiting for the archiver" in page.text


async def test_rearchive_is_limited_per_link_and_per_client(live: httpx.AsyncClient) -> None:
    ok = await live.post("/links/1/rearchive")
    assert ok.status_code == 202 and ok.json()["link_id"] == 1
    assert (await last_command(live, CMD_REARCHIVE))["link_id"] == 1
    again = await live.post("/links/1/rearchive")
    assert again.status_code == 429 and int(again.headers["retry-after"]) > 0
    assert (await live.post("/links/2/rearchive")).status_code == 202
    assert (await live.post("/links/4/rearchive")).status_code == 202
    assert (await live.post("/submit", json={"url": "https://x.com/a/status/3"})).status_code == 202
    # four actions in the window: the client is now told to wait, whatever it asks
    tired = await live.post("/submit", json={"url": "https://x.com/a/status/4"})
    assert tired.status_code == 429 and "retry-after" in tired.headers


async def test_admin_token_guards_actions(archive: Path, nats_url: str) -> None:
    settings = web_settings(archive, admin_token=SecretStr("sesame"))
    state = await connected(WebState.of(settings), nats_url)
    async with client_for(state) as c:
        assert (
            await c.post("/submit", json={"url": "https://x.com/a/status/5"})
        ).status_code == 401
        bearer = {"authorization": "Bearer sesame"}
        ok = await c.post("/submit", json={"url": "https://x.com/a/status/5"}, headers=bearer)
        assert ok.status_code == 202
        form = await c.post("/links/1/rearchive", data={"token": "sesame"})
        assert form.status_code == 202
        wrong = await c.post("/links/2/rearchive", data={"token": "nope"})
        assert wrong.status_code == 401
        page = await c.get("/links/1", headers={"accept": "text/html"})
        assert 'name="token"' in page.text
    assert state.nc is not None
    await state.nc.close()


async def test_a_decided_submission_says_what_became_of_it(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from tests.web.archive import build

    h: Harness = build(tmp_path / "archive.sqlite3")
    rid = "ab" * 16
    h.apply(SubmitCommand(url="https://x.com/a/status/77", request_id=rid,
                          requested_at=datetime(2026, 1, 1, tzinfo=UTC)))  # fmt: skip
    h.conn.close()
    async with client_for(WebState.of(web_settings(tmp_path))) as c:
        sub = (await c.get(f"/submissions/{rid}.json")).json()
    assert sub["state"] == "decided" and sub["decision"] == "queued"
    assert sub["link_id"] and sub["job_status"] == "queued" and sub["link_url"]
