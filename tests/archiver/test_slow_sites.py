"""Slow is not dead: a real archiver process (real NATS, SeaweedFS, Chromium) captures pages
of a site whose every answer (document, style sheet, image, favicon) takes N seconds, one
page after another as `dla add` would have them, and every page is archived with its
screenshot. A subresource that takes longer than the bound is cut, but its host is not
marked unresponsive (it answers, slowly), and the next page's own document waits for the
navigation's timeout whatever mark its host carries. Each page also loads an image from a
third-party host that accepts and never answers: that one is still cut (and marked)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler

import pytest

from services.supervisor.children import Child
from services.supervisor.infra import start_nats
from shared import bus
from shared.hooks.records import ArchiveResultRecord, ArtifactRecord
from shared.messages import CaptureEvent, CaptureJob
from shared.s3 import ObjectStore
from shared.settings import CommonSettings
from shared.subjects import JOB_CAPTURE
from testkit.capture_results import collect
from testkit.httpserver import FixtureServer, Reply, Route
from testkit.rawserver import RawServer, silent
from testkit.stack_env import ENGINES_GRACE_S, own_engines_env

pytestmark = pytest.mark.integration
PAGES = 2
"""Pages of each slow site, captured one after the other: the first page's slow favicon
and subresources must not cost the next page its document."""


@dataclass
class Archiver:
    """One archiver process on its own NATS, for the module's captures."""

    nats_url: str
    env: dict[str, str]


@pytest.fixture(scope="module")
def archiver(
    tmp_path_factory: pytest.TempPathFactory, s3_env: dict[str, str]
) -> Iterator[Archiver]:
    folder = tmp_path_factory.mktemp("slow-sites")
    nats = start_nats(folder / "nats", folder / "nats.log")
    env = own_engines_env()
    env.update(s3_env, NATS_URL=nats.url, DATA_DIR=str(folder / "data"),
               ALLOW_PRIVATE_TARGETS="true", LOG_LEVEL="INFO")  # fmt: skip
    child: Child | None = None
    try:
        asyncio.run(declare_streams(nats.url))
        log = folder / "archiver.log"
        child = Child("archiver", [sys.executable, "-m", "services.archiver"], env, log).start()
        yield Archiver(nats.url, env)
        assert child.stop() == 0, log.read_text()[-3000:]
    finally:
        if child is not None:
            child.stop()
        nats.child.stop(ENGINES_GRACE_S)


async def declare_streams(nats_url: str) -> None:
    nc = await bus.connect(nats_url, "test")
    try:
        await bus.ensure_streams(nc.jetstream())
    finally:
        await nc.close()


def slowly(delay: float, reply: Reply) -> Route:
    """A route that answers reply after `delay` seconds (the fixture server's thread per
    request sleeps; the others go on)."""

    def answer(handler: BaseHTTPRequestHandler) -> Reply:
        time.sleep(delay)
        return reply

    return answer


def page(n: int, ads: str) -> bytes:
    return f"""<html><head><title>Slow page {n}</title>
<link rel="stylesheet" href="/site.css"><link rel="icon" href="/favicon.ico">
</head><body><h1>Slow page {n}</h1><p>Words of page {n}.</p><img src="/photo.png">
<img src="{ads}/ad.png"></body></html>""".encode()


@pytest.fixture(scope="module")
def dead_ads() -> Iterator[RawServer]:
    """127.0.0.3: a third-party host that accepts every connection and never answers."""
    with RawServer("127.0.0.3") as s:
        s.routes["/ad.png"] = silent
        yield s


@pytest.fixture(params=[2, 3, 5, 10], ids=lambda d: f"{d}s")
def slow_site(request: pytest.FixtureRequest, dead_ads: RawServer) -> Iterator[FixtureServer]:
    """127.0.0.2 (a fresh port per delay): every answer takes `param` seconds."""
    delay = float(request.param)
    with FixtureServer("127.0.0.2") as site:
        replies = {
            "/site.css": Reply(b"h1 { color: #036 }", headers={"Content-Type": "text/css"}),
            "/photo.png": Reply(b"not a png", headers={"Content-Type": "image/png"}),
            "/favicon.ico": Reply(b"", headers={"Content-Type": "image/x-icon"}),
            **{f"/page{n}": Reply(page(n, dead_ads.base)) for n in range(PAGES)},
        }
        site.routes.update({path: slowly(delay, reply) for path, reply in replies.items()})
        yield site


@pytest.mark.timeout(300)  # the first case starts the archiver; a 10 s site's page ~30 s
async def test_every_page_of_a_slow_site_is_archived_with_its_screenshot(
    archiver: Archiver, slow_site: FixtureServer
) -> None:
    settings = CommonSettings.model_validate({k.lower(): v for k, v in archiver.env.items()})
    for n in range(PAGES):
        snapshot = f"slow-{slow_site.port}-{n}"
        nc = await bus.connect(archiver.nats_url, "test")
        job = CaptureJob(job_id=slow_site.port * PAGES + n, link_id=slow_site.port,
                         snapshot_id=snapshot, url=f"{slow_site.base}/page{n}",
                         deadline=datetime.now(UTC) + timedelta(minutes=5))  # fmt: skip
        await bus.publish(nc.jetstream(), JOB_CAPTURE, job)
        await nc.close()
        got = await collect(archiver.nats_url, 1, timeout=120, snapshot_id=snapshot)
        records = [m.record for m in got if isinstance(m, CaptureEvent)]
        finals = {r.plugin: r for r in records
                  if isinstance(r, ArchiveResultRecord) and r.exit_code is not None}  # fmt: skip
        for plugin in ("navigate", "screenshot"):
            assert finals[plugin].status == "succeeded", (n, finals[plugin].output_str)
        keys = {r.kind: r.s3_key for r in records if isinstance(r, ArtifactRecord)}
        async with ObjectStore(settings) as store:
            assert (await store.get_bytes(keys["screenshot"])).startswith(b"\x89PNG")
            failed = json.loads(await store.get_bytes(keys["navigation"]))["failed"]
        # the slow host's late answers were cut, never refused for a mark; the dead one's not
        slow = f"{slow_site.host}:{slow_site.port}"
        marked = [e for e in failed if e["origin"] == slow and "unanswered" in e["reason"]]
        assert marked == [], (n, marked)
        assert any(e["url"].endswith("/ad.png") for e in failed), (n, failed)
