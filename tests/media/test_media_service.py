"""The media service as a real process on real NATS and SeaweedFS, with real yt-dlp/ffmpeg:
a job runs to the end; a worker SIGKILLed mid-download loses nothing."""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from shared import bus
from shared.hooks.records import ArchiveResultRecord, ArtifactRecord, MediaRecord, ProgressRecord
from shared.messages import CaptureDone, CaptureEvent, CaptureJob
from shared.s3 import ObjectStore
from shared.settings import CommonSettings
from shared.subjects import JOB_MEDIA, MODELS, RESULTS
from testkit.mediaserver import MediaServer, Served, make_clip
from testkit.waiting import until

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # ~1-2 MB: long enough to be killed mid-download when served at 200 KB/s
    return make_clip(tmp_path_factory.mktemp("clip") / "long.mp4", seconds=20, size="640x360")


@pytest.fixture
def site(clip: Path) -> Iterator[MediaServer]:
    with MediaServer("127.0.0.2") as s:
        s.routes["/long.mp4"] = Served(clip.read_bytes(), "video/mp4", bytes_per_second=200_000)
        yield s


class MediaWorker:
    """`python -m services.media` in its own session; killed by PID."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.log = log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "services.media"],
            cwd=REPO, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
        self.proc.wait(timeout=30)
        self.log.close()


@pytest.fixture
async def results(nats_url: str) -> AsyncIterator[list[object]]:
    """Everything the workers publish on capture.>, collected in the background."""
    nc = await bus.connect(nats_url, "test")
    js = nc.jetstream()
    await bus.ensure_streams(js)
    got: list[object] = []
    sub = await js.pull_subscribe("capture.>", stream=RESULTS.name)

    async def pump() -> None:
        while True:
            for msg in await bus.fetch(sub, 100, timeout=0.3):
                got.append(MODELS[msg.subject].model_validate_json(msg.data))
                await msg.ack()

    task = asyncio.create_task(pump())
    got.append(js)  # the first item is the JetStream context, for publishing
    yield got
    task.cancel()
    await nc.close()


def digest_of(path: Path) -> tuple[str, int]:
    data = path.read_bytes()
    return hashlib.sha256(data).hexdigest(), len(data)


def processes_under(folder: Path) -> list[int]:
    """PIDs whose working directory is inside folder."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        if cwd.startswith(str(folder)):
            pids.append(int(proc.name))
    return pids


async def test_worker_killed_mid_download_loses_nothing(
    nats_url: str,
    s3_env: dict[str, str],
    site: MediaServer,
    clip: Path,
    results: list[object],
    tmp_path: Path,
) -> None:
    js = results[0]
    env = {
        **os.environ,
        **s3_env,
        "NATS_URL": nats_url,
        "DATA_DIR": str(tmp_path / "data"),
        "ALLOW_PRIVATE_TARGETS": "true",
        "JOB_ACK_WAIT_SECONDS": "3",
        "MEDIA_PROGRESS_INTERVAL": "0.2",
        "MEDIA_SOCKET_TIMEOUT": "5",
        "LOG_LEVEL": "INFO",
    }
    async with ObjectStore(
        CommonSettings.model_validate({k.lower(): v for k, v in s3_env.items()})
    ) as store:
        await store.ensure_bucket()
    job = CaptureJob(
        job_id=41, link_id=9, snapshot_id="snapkill", url=f"{site.base}/long.mp4",
        deadline=datetime.now(UTC) + timedelta(minutes=10),
    )  # fmt: skip
    await bus.publish(js, JOB_MEDIA, job)  # type: ignore[arg-type]

    first = MediaWorker(env, tmp_path / "worker1.log")
    try:

        def progressed() -> bool:
            return any(
                isinstance(r, ProgressRecord) and r.downloaded_bytes > 100_000
                for m in results
                if isinstance(m, CaptureEvent)
                for r in m.records
            )

        await until(progressed, 60, "a Progress record")
    finally:
        first.kill(signal.SIGKILL)
    scratch = tmp_path / "data" / "scratch" / f"media-{first.proc.pid}"
    assert scratch.is_dir(), "the dead worker left its scratch folder"
    # the orphaned hook notices nobody reads its output, deletes its partial files and exits
    await until(lambda: not processes_under(scratch), 30, "the hook processes gone")
    leftovers = [p.name for p in scratch.rglob("*") if p.is_file() and ".part" in p.name]
    assert not leftovers, leftovers
    assert not [m for m in results if isinstance(m, CaptureDone)], "the killed run never finished"

    # the throttle only had to hold the first download long enough to be killed mid-way: the
    # redelivered job downloads the whole clip again, unthrottled
    site.routes["/long.mp4"] = Served(site.routes["/long.mp4"].body, "video/mp4")
    second = MediaWorker(env, tmp_path / "worker2.log")
    try:
        await until(lambda: any(isinstance(m, CaptureDone) for m in results), 120, "CaptureDone")
    finally:
        second.kill(signal.SIGTERM)
    assert not scratch.exists(), "the next worker swept the dead worker's scratch folder"
    (done,) = [m for m in results if isinstance(m, CaptureDone)]
    assert done.run >= 2 and done.retry_hooks == []
    events = [m for m in results if isinstance(m, CaptureEvent) and m.run == done.run]
    records = [r for e in events for r in e.records]
    final = [
        r
        for r in records
        if isinstance(r, ArchiveResultRecord) and r.status not in ("queued", "started")
    ]
    assert final and final[-1].status == "succeeded", final
    artifacts = {r.kind: r for r in records if isinstance(r, ArtifactRecord)}
    assert {"video", "info"} <= set(artifacts), artifacts
    video = artifacts["video"]
    assert (video.sha256, video.bytes) == digest_of(clip)
    assert video.content_type == "video/mp4"
    assert [r for r in records if isinstance(r, MediaRecord)]
    async with ObjectStore(
        CommonSettings.model_validate({k.lower(): v for k, v in s3_env.items()})
    ) as store:
        keys = await store.list_keys("archives/9/snapkill/")
        assert video.s3_key in keys and not [k for k in keys if ".part" in k]
        assert await store.incomplete_uploads("archives/9/") == []
