"""Slow is not dead: a real archiver process (real NATS, SeaweedFS, Chromium) captures pages
of sites whose every answer (document, style sheet, image, favicon) takes N seconds (2, 3, 5
and 10), each site's pages one after another as `dla add` would have them, and every page is
archived with its screenshot. A subresource that takes longer than the bound is cut, but its
host is not marked unresponsive (it answers, slowly), and the next page's own document waits
for the navigation's timeout whatever mark its host carries. Each page also loads an image
from a third-party host that accepts and never answers: that one is still cut (and marked).

The four sites are captured at the same time by the one archiver (ARCHIVER_CONCURRENCY=4,
each site on its own host): the module waits ~the 10 s site's time instead of the sum of the
four. Each delay's test reads its own site's captures, so a failure still names the delay.
The deferral of a host's jobs while one of its jobs runs long is off here
(ARCHIVER_LONG_JOB_SECONDS=0; tests/capture/test_worker.py tests it): a site's next page is
sent when its previous capture's CaptureDone arrives, a moment before that job leaves its
slot, so a page that took over 20 s had its next page deferred 20 s, and under load every
site's first page takes that long."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler

import pytest

from services.supervisor.children import Child
from shared import bus
from shared.hooks.records import ArchiveResultRecord, ArtifactRecord
from shared.messages import CaptureEvent, CaptureJob
from shared.s3 import ObjectStore
from shared.settings import CommonSettings
from shared.subjects import JOB_CAPTURE
from testkit.capture_results import collect
from testkit.httpserver import FixtureServer, Reply, Route
from testkit.rawserver import RawServer, silent
from testkit.stack_env import own_engines_env

pytestmark = pytest.mark.integration
PAGES = 2
"""Pages of each slow site, captured one after the other: the first page's slow favicon
and subresources must not cost the next page its document."""
DELAYS = {2: "127.0.0.22", 3: "127.0.0.23", 5: "127.0.0.25", 10: "127.0.0.30"}
"""Seconds every answer of a site takes -> the site's host (a host of its own: the sites run
at once, and nothing one site's pages do to their host's standing touches another's)."""


@dataclass
class Archiver:
    """One archiver process on its own NATS, for the module's captures."""

    nats_url: str
    env: dict[str, str]


@pytest.fixture(scope="module")
def archiver(
    tmp_path_factory: pytest.TempPathFactory, s3_env: dict[str, str], module_nats_url: str
) -> Iterator[Archiver]:
    folder = tmp_path_factory.mktemp("slow-sites")
    env = own_engines_env()
    env.update(s3_env, NATS_URL=module_nats_url, DATA_DIR=str(folder / "data"),
               ALLOW_PRIVATE_TARGETS="true", LOG_LEVEL="INFO",
               ARCHIVER_CONCURRENCY=str(len(DELAYS)), ARCHIVER_LONG_JOB_SECONDS="0")  # fmt: skip
    child: Child | None = None
    try:
        asyncio.run(declare_streams(module_nats_url))
        log = folder / "archiver.log"
        child = Child("archiver", [sys.executable, "-m", "services.archiver"], env, log).start()
        yield Archiver(module_nats_url, env)
        assert child.stop() == 0, log.read_text()[-3000:]
    finally:
        if child is not None:
            child.stop()


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


def slow_site(delay: float, host: str, ads: RawServer) -> FixtureServer:
    """A site on `host` (a fresh port) whose every answer takes `delay` seconds."""
    site = FixtureServer(host)
    replies = {
        "/site.css": Reply(b"h1 { color: #036 }", headers={"Content-Type": "text/css"}),
        "/photo.png": Reply(b"not a png", headers={"Content-Type": "image/png"}),
        "/favicon.ico": Reply(b"", headers={"Content-Type": "image/x-icon"}),
        **{f"/page{n}": Reply(page(n, ads.base)) for n in range(PAGES)},
    }
    site.routes.update({path: slowly(delay, reply) for path, reply in replies.items()})
    return site


@dataclass
class Site:
    """A slow site and what its pages' captures published (a page's list, or the error
    its capture ended in)."""

    server: FixtureServer
    pages: list[list[object]] | BaseException


async def capture_pages(nats_url: str, site: FixtureServer) -> list[list[object]]:
    """The site's pages captured one after the other: each page's job is sent once the
    previous page's capture is done; the messages each capture published."""
    pages = []
    for n in range(PAGES):
        snapshot = f"slow-{site.port}-{n}"
        nc = await bus.connect(nats_url, "test")
        job = CaptureJob(job_id=site.port * PAGES + n, link_id=site.port,
                         snapshot_id=snapshot, url=f"{site.base}/page{n}",
                         deadline=datetime.now(UTC) + timedelta(minutes=5))  # fmt: skip
        await bus.publish(nc.jetstream(), JOB_CAPTURE, job)
        await nc.close()
        pages.append(await collect(nats_url, 1, timeout=180, snapshot_id=snapshot))
    return pages


@pytest.fixture(scope="module")
def slow_sites(archiver: Archiver, dead_ads: RawServer) -> Iterator[dict[int, Site]]:
    """Every delay's site, all captured at once (each site's pages in turn)."""
    with ExitStack() as servers:
        sites = {
            d: servers.enter_context(slow_site(float(d), host, dead_ads))
            for d, host in DELAYS.items()
        }

        async def all_sites() -> list[list[list[object]] | BaseException]:
            return await asyncio.gather(
                *(capture_pages(archiver.nats_url, s) for s in sites.values()),
                return_exceptions=True,
            )

        got = asyncio.run(all_sites())
        yield {d: Site(s, g) for (d, s), g in zip(sites.items(), got, strict=True)}


# the first case starts the archiver and captures every site: a 10 s site's page ~30 s
@pytest.mark.timeout(420)
@pytest.mark.parametrize("delay", list(DELAYS), ids=lambda d: f"{d}s")
async def test_every_page_of_a_slow_site_is_archived_with_its_screenshot(
    archiver: Archiver, slow_sites: dict[int, Site], delay: int
) -> None:
    site = slow_sites[delay]
    if isinstance(site.pages, BaseException):
        raise site.pages
    settings = CommonSettings.model_validate({k.lower(): v for k, v in archiver.env.items()})
    assert len(site.pages) == PAGES
    for n, got in enumerate(site.pages):
        records = [r for m in got if isinstance(m, CaptureEvent) for r in m.records]
        finals = {r.plugin: r for r in records
                  if isinstance(r, ArchiveResultRecord) and r.exit_code is not None}  # fmt: skip
        for plugin in ("navigate", "screenshot"):
            assert finals[plugin].status == "succeeded", (n, finals[plugin].output_str)
        keys = {r.kind: r.s3_key for r in records if isinstance(r, ArtifactRecord)}
        async with ObjectStore(settings) as store:
            assert (await store.get_bytes(keys["screenshot"])).startswith(b"\x89PNG")
            failed = json.loads(await store.get_bytes(keys["navigation"]))["failed"]
        # the slow host's late answers were cut, never refused for a mark; the dead one's not
        slow = f"{site.server.host}:{site.server.port}"
        marked = [e for e in failed if e["origin"] == slow and "unanswered" in e["reason"]]
        assert marked == [], (n, marked)
        assert any(e["url"].endswith("/ad.png") for e in failed), (n, failed)
