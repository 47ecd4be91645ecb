"""/healthz answers in time whatever hangs; /metrics counts by route template."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx

from services.web.connections import open_storage
from services.web.queries.stats import queued_jobs
from services.web.state import WebState
from tests.web.conftest import client_for, web_settings


async def test_health_answers_when_s3_hangs_and_nats_is_away(archive: Path) -> None:
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)  # accepts connections (kernel backlog) and never answers
    try:
        port = silent.getsockname()[1]
        settings = web_settings(
            archive, s3_endpoint=f"http://127.0.0.1:{port}", health_timeout_seconds=1.0
        )
        state = WebState.of(settings)
        async with open_storage(state), client_for(state) as c:
            # The database's first read opens its connection; on a loaded machine that alone
            # can pass the bound, and this test is about S3 and NATS.
            assert await state.db.read(queued_jobs, -1) == 0
            resp = await c.get("/healthz")
    finally:
        silent.close()
    assert resp.status_code == 503
    body = resp.json()
    assert body["db"] is True and body["backlog"] == 0
    assert body["s3"] is False and body["details"]["s3"] == "no answer within 1 s"
    assert body["nats"] is False


async def test_metrics_label_routes_by_template(client: httpx.AsyncClient) -> None:
    for path in ("/links/1.json", "/links/2.json", "/links/999.json", "/no/such/page"):
        await client.get(path)
    text = (await client.get("/metrics")).text
    assert 'route="/links/{link_id}.json"' in text
    assert 'route="(unmatched)"' in text
    assert 'route="/links/1.json"' not in text and "/no/such/page" not in text
