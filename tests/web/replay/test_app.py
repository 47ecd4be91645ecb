"""The replay origin through the real app and a real S3 (SeaweedFS): one listener answers the
UI and the replay origin apart by host name; the replay origin serves a public capture's WACZ
(Range requests too) and its viewer, never a private capture's, never a UI route; the link
page leads there. (In real Chromium, with a whole stack: tests/e2e/test_replay.py.)"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from services.web.connections import open_storage
from services.web.replay import bundle
from services.web.replay.app import REPLAY_CSP, WORKER_CSP
from services.web.state import WebState
from services.writer.db import open_db
from shared.hooks.records import ArtifactRecord, HookRecord, SnapshotRecord
from shared.s3 import ObjectStore
from testkit.writer_harness import Harness, done, event, occ, post
from tests.web.conftest import client_for, web_settings
from tests.web.test_artifacts import s3_settings

pytestmark = pytest.mark.integration

PORT = 8123
REPLAY = f"replay.localhost:{PORT}"
UI = f"127.0.0.1:{PORT}"
PUBLIC_URL, PRIVATE_URL = "https://example.org/a", "https://x.com/ada/status/1"
WACZ = os.urandom(5000)
WACZ_ID, SHOT_ID, PRIVATE_WACZ_ID = 1, 2, 3


def captured(data: Path) -> None:
    """Two links: one captured as anyone sees it, one with the site's cookies (private);
    each with a WACZ (artifact 1 and 3) and a screenshot (2 and 4)."""
    h = Harness(open_db(data / "archive.sqlite3"))
    for n, (url, logged_in) in enumerate(((PUBLIC_URL, False), (PRIVATE_URL, True)), 1):
        h.apply(post(f"g{n}", occ(url)))
        (job,) = (h.job(j.job_id) for j in h.dispatch())
        records: list[HookRecord] = [SnapshotRecord(final_url=f"{url}?final", logged_in=logged_in)]
        files = (("wacz", "evidence", "capture.wacz", WACZ),
                 ("screenshot", "screenshot", "shot.png", b"png"))  # fmt: skip
        for kind, plugin, name, body in files:
            records.append(ArtifactRecord(
                plugin=plugin, kind=kind, path=name, s3_key=f"replay-tests/{n}/{name}",
                content_type="application/octet-stream", bytes=len(body),
                sha256=hashlib.sha256(body).hexdigest()))  # fmt: skip
        h.apply(*(event(job, i, r) for i, r in enumerate(records)), done(job, records=len(records)))
    h.conn.close()


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory, s3_env: dict[str, str]) -> Path:
    data = tmp_path_factory.mktemp("replay")
    captured(data)

    async def upload() -> None:
        async with ObjectStore(s3_settings(data, s3_env)) as store:
            await store.ensure_bucket()
            for n in (1, 2):
                await store.put_bytes(f"replay-tests/{n}/capture.wacz", WACZ, "application/zip")

    asyncio.run(upload())
    bundle.ensure()
    return data


@pytest.fixture
async def web(archive: Path, s3_env: dict[str, str]) -> AsyncIterator[httpx.AsyncClient]:
    state = WebState.of(s3_settings(archive, s3_env, web_port=PORT))
    assert state.replay is not None and state.replay.origin == f"http://{REPLAY}"
    async with open_storage(state), client_for(state) as c:
        yield c
    state.db.dispose()


async def test_the_link_page_leads_to_the_replay_origin(web: httpx.AsyncClient) -> None:
    page = await web.get("/links/1", headers={"host": UI, "accept": "text/html"})
    assert 'href="/links/1/replay"' in page.text and "View as it was" in page.text
    assert "script-src" not in page.headers["content-security-policy"]  # still no script here
    assert (await web.get("/links/1.json", headers={"host": UI})).json()["replay_url"] == (
        "/links/1/replay"
    )
    go = await web.get("/links/1/replay", headers={"host": UI})
    assert go.status_code == 303 and go.headers["location"] == f"http://{REPLAY}/view/{WACZ_ID}"

    view = await web.get(f"/view/{WACZ_ID}", headers={"host": REPLAY})
    assert view.status_code == 200 and "set-cookie" not in view.headers
    assert f'source="/wacz/{WACZ_ID}.wacz"' in view.text
    assert f'url="{PUBLIC_URL}?final"' in view.text and 'replaybase="/replay/"' in view.text
    assert view.headers["content-security-policy"] == REPLAY_CSP
    assert view.headers["x-frame-options"] == "SAMEORIGIN"
    for asset in ("/replay/ui.js", "/replay/sw.js"):
        js = await web.get(asset, headers={"host": REPLAY})
        assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
    inner = await web.get("/replay/?source=x", headers={"host": REPLAY})  # before the worker
    assert inner.status_code == 200 and '<script src="./ui.js">' in inner.text
    worker = await web.get("/replay/sw.js", headers={"host": REPLAY})
    assert worker.headers["content-security-policy"] == WORKER_CSP  # it reads this origin only


async def test_the_wacz_is_served_whole_and_by_ranges(web: httpx.AsyncClient) -> None:
    path, host = f"/wacz/{WACZ_ID}.wacz", {"host": REPLAY}
    whole = await web.get(path, headers=host)
    assert whole.status_code == 200 and whole.content == WACZ
    assert whole.headers["accept-ranges"] == "bytes"
    head = await web.head(path, headers=host)
    assert head.status_code == 200 and head.headers["content-length"] == str(len(WACZ))
    part = await web.get(path, headers=host | {"range": "bytes=100-199"})
    assert part.status_code == 206 and part.content == WACZ[100:200]
    assert part.headers["content-range"] == f"bytes 100-199/{len(WACZ)}"
    tail = await web.get(path, headers=host | {"range": "bytes=-22"})  # the zip's end record
    assert tail.status_code == 206 and tail.content == WACZ[-22:]
    past = await web.get(path, headers=host | {"range": f"bytes={len(WACZ)}-"})
    assert past.status_code == 416 and past.headers["content-range"] == f"bytes */{len(WACZ)}"


async def test_a_private_capture_is_never_replayed(web: httpx.AsyncClient) -> None:
    page = await web.get("/links/2", headers={"host": UI, "accept": "text/html"})
    assert "🔒 private" in page.text and "View as it was" not in page.text
    link = (await web.get("/links/2.json", headers={"host": UI})).json()
    assert link["replay_url"] is None
    (wacz,) = [a for a in link["artifacts"] if a["kind"] == "wacz"]
    assert wacz["id"] == PRIVATE_WACZ_ID and wacz["private"]
    assert (await web.get("/links/2/replay", headers={"host": UI})).status_code == 404
    admin = {"host": REPLAY, "authorization": "Bearer anything"}
    for path in (f"/view/{PRIVATE_WACZ_ID}", f"/wacz/{PRIVATE_WACZ_ID}.wacz"):
        assert (await web.get(path, headers=admin)).status_code == 404, path
    # nor any other file by its id: the replay origin serves WACZs only
    for path in (f"/view/{SHOT_ID}", f"/wacz/{SHOT_ID}.wacz", "/wacz/99.wacz", "/view/0"):
        assert (await web.get(path, headers={"host": REPLAY})).status_code == 404, path


async def test_each_host_answers_only_its_own_routes(web: httpx.AsyncClient) -> None:
    for path in ("/admin/queue.json", "/links/1", "/links/1.json", f"/artifacts/{WACZ_ID}",
                 "/static/app.css", "/export/links.jsonl", "/healthz"):  # fmt: skip
        resp = await web.get(path, headers={"host": REPLAY})
        assert resp.status_code == 404, path
        assert "x-frame-options" not in resp.headers or resp.headers["x-frame-options"] != ("DENY")
    home = await web.get("/", headers={"host": REPLAY})
    assert home.status_code == 200 and "only replays" in home.text
    for path in (f"/view/{WACZ_ID}", f"/wacz/{WACZ_ID}.wacz", "/replay/sw.js"):
        assert (await web.get(path, headers={"host": UI})).status_code == 404, path


async def test_the_viewer_licence_and_source_are_served(web: httpx.AsyncClient) -> None:
    pin = bundle.REPLAYWEBPAGE
    about = await web.get("/about/replay", headers={"host": UI, "accept": "text/html"})
    assert pin.version in about.text and pin.source in about.text
    for host in (UI, REPLAY):
        licence = await web.get("/about/replay/LICENSE", headers={"host": host})
        assert "GNU AFFERO GENERAL PUBLIC LICENSE" in licence.text
        source = await web.get("/about/replay/source.tgz", headers={"host": host})
        digest = base64.b64encode(hashlib.sha512(source.content).digest()).decode()
        assert f"sha512-{digest}" == pin.integrity


async def test_replay_off_leaves_the_ui_as_it_was(archive: Path) -> None:
    state = WebState.of(web_settings(archive, web_port=PORT, replay_origin="off"))
    assert state.replay is None
    async with client_for(state) as c:
        page = await c.get("/links/1", headers={"host": UI, "accept": "text/html"})
        assert "View as it was" not in page.text
        assert (await c.get("/links/1/replay", headers={"host": UI})).status_code == 404
        assert (await c.get(f"/view/{WACZ_ID}", headers={"host": REPLAY})).status_code == 404
    state.db.dispose()
