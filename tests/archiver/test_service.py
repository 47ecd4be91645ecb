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
from shared.capture.settings import REPO_PLUGINS
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


async def capture_once(
    nats_url: str, s3_env: dict[str, str], site: FixtureServer, tmp_path: Path,
    chromium: list[int] | None = None, **extra: str,
) -> list[object]:  # fmt: skip
    """One job for the site's /article through a real archiver process; what it published.
    `chromium` gets the browser's processes seen while it ran."""
    env = own_engines_env()
    env.update(s3_env, NATS_URL=nats_url, DATA_DIR=str(tmp_path / "data"),
               ALLOW_PRIVATE_TARGETS="true", **extra)  # fmt: skip
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
        if chromium is not None:
            chromium.extend(p for p in proctree.descendants(archiver.pid)
                            if proctree.exe_name(p).startswith("chrom"))  # fmt: skip
    finally:
        assert archiver.stop() == 0, (tmp_path / "archiver.log").read_text()[-3000:]
    return list(got)


async def test_archiver_process_captures_screenshot_pdf_and_dom_into_s3(
    nats_url: str, s3_env: dict[str, str], site: FixtureServer, tmp_path: Path
) -> None:
    chromium: list[int] = []
    got = await capture_once(nats_url, s3_env, site, tmp_path, chromium, LOG_LEVEL="INFO")
    assert chromium, "the archiver keeps a browser"
    assert not [p for p in chromium if proctree.exe_name(p)], "no Chromium outlives the archiver"
    settings = CommonSettings.model_validate(
        {k.lower(): v for k, v in {**own_engines_env(), **s3_env}.items()}
    )
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


PROBE_PAGE = """\
from shared import pageclient as pc
from shared.hooks.records import emit
with pc.PageClient() as page:
    title = page.evaluate("document.title")
emit({"type": "ArchiveResult", "status": "succeeded", "output_str": f"title {title}"})
"""
PROBE_AFTER = """\
from shared import pageclient as pc
from shared.hooks.records import emit
try:
    with pc.PageClient() as page:
        said = "page open: " + str(page.evaluate("document.title"))
except pc.PageError as exc:
    said = "no page: " + exc.code
emit({"type": "ArchiveResult", "status": "succeeded", "output_str": said})
"""


def probe_plugins(folder: Path) -> Path:
    """navigate (the repo's) and a probe asking for the page at step 5 and at step 8."""
    folder.mkdir()
    (folder / "navigate").symlink_to(REPO_PLUGINS / "navigate")
    probe = folder / "probe"
    probe.mkdir()
    (probe / "config.json").write_text('{"title": "probe", "type": "object", "properties": {}}')
    (probe / "on_Snapshot__55_probe_page.py").write_text(PROBE_PAGE)
    (probe / "on_Snapshot__85_probe_after.py").write_text(PROBE_AFTER)
    return folder


async def test_the_page_is_closed_once_step_7_is_over(
    nats_url: str, s3_env: dict[str, str], site: FixtureServer, tmp_path: Path
) -> None:
    """The plugin contract's step 7 ends the browser's part: a hook of step 8 (post-processing,
    which reads files) finds no page; a hook of step 5 uses it."""
    plugins = probe_plugins(tmp_path / "p")
    got = await capture_once(nats_url, s3_env, site, tmp_path, PLUGINS_DIR=str(plugins))
    finals = {
        r.hook: r
        for m in got
        if isinstance(m, CaptureEvent)
        for r in m.records
        if isinstance(r, ArchiveResultRecord) and r.exit_code is not None
    }
    assert finals["on_Snapshot__21_navigate.py"].status == "succeeded"
    assert finals["on_Snapshot__55_probe_page.py"].output_str == "title Archived words"
    assert finals["on_Snapshot__85_probe_after.py"].output_str == "no page: E_PAGE_NO_BROWSER"
