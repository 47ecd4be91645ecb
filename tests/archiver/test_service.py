"""A real archiver process (`python -m services.archiver`) on real NATS and SeaweedFS: a
local page is captured with the warm browser and its screenshot, PDF and DOM land in S3."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from services.supervisor.children import Child
from shared import bus
from shared import processes as proctree
from shared.hooks.records import ArchiveResultRecord, ArtifactRecord
from shared.messages import CaptureEvent, CaptureJob
from shared.s3 import ObjectStore
from shared.settings import CommonSettings
from shared.subjects import JOB_CAPTURE
from testkit.capture_results import collect
from testkit.httpserver import FixtureServer, Reply, Serve
from testkit.stack_env import own_engines_env

pytestmark = pytest.mark.integration
PAGE = (
    b"<html><head><title>Archived words</title></head><body style='background:#fff'>"
    b"<h1 style='color:#036'>A page worth keeping</h1><p>Some words.</p>"
    b"<div style='height:1200px;background:linear-gradient(#fc0,#09f)'></div></body></html>"
)


@pytest.fixture
def site(serve: Serve) -> FixtureServer:
    return serve({"/article": Reply(PAGE)}, "127.0.0.2")


async def test_archiver_process_captures_screenshot_pdf_and_dom_into_s3(
    nats_url: str, s3_env: dict[str, str], site: FixtureServer, tmp_path: Path
) -> None:
    env = own_engines_env()
    env.update(s3_env, NATS_URL=nats_url, DATA_DIR=str(tmp_path / "data"),
               ALLOW_PRIVATE_TARGETS="true", LOG_LEVEL="INFO")  # fmt: skip
    settings = CommonSettings.model_validate({k.lower(): v for k, v in env.items()})
    nc = await bus.connect(nats_url, "test")
    await bus.ensure_streams(nc.jetstream())
    job = CaptureJob(job_id=1, link_id=9, snapshot_id="snapA", url=f"{site.base}/article",
                     deadline=datetime.now(UTC) + timedelta(minutes=5))  # fmt: skip
    await bus.publish(nc.jetstream(), JOB_CAPTURE, job)
    await nc.close()
    archiver = Child("archiver", [sys.executable, "-m", "services.archiver"], env,
                     tmp_path / "archiver.log").start()  # fmt: skip
    try:
        got = await collect(nats_url, 1, timeout=120)
        chromium = [p for p in proctree.descendants(archiver.pid)
                    if proctree.exe_name(p).startswith("chrom")]  # fmt: skip
        assert chromium, "the archiver keeps a browser"
    finally:
        assert archiver.stop() == 0, (tmp_path / "archiver.log").read_text()[-3000:]
    assert not [p for p in chromium if proctree.exe_name(p)], "no Chromium outlives the archiver"
    events = [r for m in got if isinstance(m, CaptureEvent) for r in m.records]
    finals = {
        r.plugin: r
        for r in events
        if isinstance(r, ArchiveResultRecord) and r.exit_code is not None
    }
    for plugin in ("navigate", "adjust", "screenshot", "pdf", "dom"):
        assert finals[plugin].status == "succeeded", finals[plugin]
    artifacts = {r.kind: r for r in events if isinstance(r, ArtifactRecord)}
    expect = {"screenshot": "image/png", "pdf": "application/pdf", "dom": "text/html"}
    async with ObjectStore(settings) as store:
        for kind, ctype in expect.items():
            art = artifacts[kind]
            assert art.content_type == ctype and art.s3_key.startswith("archives/9/snapA/")
            data = await store.get_bytes(art.s3_key)
            assert len(data) == art.bytes > 0
        shot = await store.get_bytes(artifacts["screenshot"].s3_key)
        dom = await store.get_bytes(artifacts["dom"].s3_key)
    (tmp_path / "screenshot.png").write_bytes(shot)
    assert shot.startswith(b"\x89PNG") and b"A page worth keeping" in dom
    assert artifacts["navigation"].s3_key.endswith("navigate/navigate.json")
