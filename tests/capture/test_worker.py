"""The capture worker on real NATS JetStream and SeaweedFS, with the real runner and plugins."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import json
import socket
import threading
import zipfile
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from nats.js.api import ConsumerInfo
from nats.js.errors import NotFoundError
from prometheus_client import REGISTRY

from services.supervisor.children import free_ports
from shared import bus
from shared.capture.settings import REPO_PLUGINS
from shared.capture.worker import run_worker
from shared.capture.worker_config import WorkerConfig
from shared.evidence.manifest import manifest_path, wacz_path
from shared.hooks.records import ArchiveResultRecord, ArtifactRecord
from shared.messages import (
    CaptureDone,
    CaptureEvent,
    CaptureJob,
    EvidenceReport,
    HostReleased,
    WorkerBinaries,
)
from shared.s3 import ObjectStore
from shared.settings import CommonSettings
from shared.subjects import ARCHIVER_JOBS, CAPTURE_DONE, JOB_CAPTURE, MODELS, RESULTS
from testkit.httpserver import FixtureServer, Reply, Serve
from testkit.rawserver import Behaviour, RawServer, head

pytestmark = pytest.mark.integration
PAGE = b"<html><title>t</title><p>page</p></html>"


def settings(nats_url: str, s3_env: dict[str, str]) -> CommonSettings:
    return CommonSettings.model_validate(
        {"nats_url": nats_url, **{k.lower(): v for k, v in s3_env.items()}}
    )


def job(url: str, job_id: int = 1) -> CaptureJob:
    return CaptureJob(
        job_id=job_id, link_id=7, snapshot_id=f"snap{job_id}", url=url,
        deadline=datetime.now(UTC) + timedelta(minutes=5),
    )  # fmt: skip


class Harness:
    def __init__(self, nats_url: str, s: CommonSettings, tmp: Path) -> None:
        self.nats_url, self.s, self.tmp = nats_url, s, tmp
        self.stop = asyncio.Event()

    async def __aenter__(self) -> Harness:
        self.nc = await bus.connect(self.nats_url, "test")
        self.js = self.nc.jetstream()
        await bus.ensure_streams(self.js)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.nc.close()

    async def consumer_reaches(self, reached: Callable[[ConsumerInfo], bool]) -> None:
        """Until the archiver's consumer's state is `reached` (30 s at most)."""
        for _ in range(300):
            await asyncio.sleep(0.1)
            with contextlib.suppress(NotFoundError):
                if reached(await self.js.consumer_info("JOBS", ARCHIVER_JOBS.durable)):
                    return

    def config(self) -> WorkerConfig:
        return WorkerConfig(
            service="archiver", consumer=ARCHIVER_JOBS, plugins_dirs=[REPO_PLUGINS],
            scratch_dir=self.tmp / "scratch", s3_prefix="archives/", nak_delay_s=0.5,
            skip_plugins=("media",),  # as the archiver service: media runs on its own workers
            hook_env={"ALLOW_PRIVATE_TARGETS": "true", "PATH": "/usr/bin:/bin"},
        )  # fmt: skip

    async def results(self, until_done: int, timeout: float = 120) -> list[object]:
        sub = await self.js.pull_subscribe("capture.>", stream=RESULTS.name)
        got: list[object] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while sum(isinstance(m, CaptureDone) for m in got) < until_done:
            assert loop.time() < deadline, f"timed out; got {got}"
            for msg in await bus.fetch(sub, 100, timeout=0.5):
                model = MODELS[msg.subject]
                got.append(model.model_validate_json(msg.data))
                await msg.ack()
        return got


@pytest.fixture
def site(serve: Serve) -> FixtureServer:
    return serve({"/p": Reply(PAGE)}, "127.0.0.2")


async def test_a_job_streams_records_and_uploads_artifacts(
    nats_url: str, s3_env: dict[str, str], site: FixtureServer, tmp_path: Path
) -> None:
    s = settings(nats_url, s3_env)
    async with Harness(nats_url, s, tmp_path) as h, ObjectStore(s) as store:
        await store.ensure_bucket()
        await bus.publish(h.js, JOB_CAPTURE, job(f"{site.base}/p"))
        worker = asyncio.create_task(run_worker(h.config(), h.js, store, h.stop))
        got = await h.results(until_done=1)
        h.stop.set()
        await worker
        events = [m for m in got if isinstance(m, CaptureEvent)]
        assert any(isinstance(m, WorkerBinaries) for m in got), "the worker reports binaries"
        done = next(m for m in got if isinstance(m, CaptureDone))
        assert done.records == len(events) and done.retry_hooks == []
        assert [e.seq for e in events] == list(range(len(events)))
        records = [r for e in events for r in e.records]
        statuses = [r.status for r in records if isinstance(r, ArchiveResultRecord)]
        assert statuses[0] == "queued" and statuses[-1] == "succeeded"
        # every hook's queued result in the first message; no claim and no quick hook's
        # start sent apart: a final result per hook, with its files' Artifact records
        results = [r for r in records if isinstance(r, ArchiveResultRecord)]
        queued = [
            r.hook
            for r in events[0].records
            if isinstance(r, ArchiveResultRecord) and r.status == "queued"
        ]
        ended = [r.hook for r in results if r.status not in ("queued", "started")]
        assert sorted(queued) == sorted(ended)
        assert statuses.count("queued") == len(queued)
        [fetched] = [
            e
            for e in events
            if any(
                isinstance(r, ArchiveResultRecord) and r.plugin == "fetch" and r.exit_code == 0
                for r in e.records
            )
        ]
        assert [type(r).__name__ for r in fetched.records][-1] == "ArchiveResultRecord"
        assert {r.kind for r in fetched.records if isinstance(r, ArtifactRecord)} >= {
            "raw_response",
            "headers",
        }
        artifacts = {r.kind: r for r in records if isinstance(r, ArtifactRecord)}
        raw = artifacts["raw_response"]
        assert raw.s3_key == "archives/7/snap1/fetch/body.html" and "headers" in artifacts
        assert await store.get_bytes(raw.s3_key) == PAGE
        assert raw.sha256 == hashlib.sha256(PAGE).hexdigest() and raw.bytes == len(PAGE)
        assert await store.head("archives/7/snap1/archiver.meta.json") is not None
        info = await h.js.consumer_info("JOBS", ARCHIVER_JOBS.durable)
        assert info.num_ack_pending == 0 and info.num_pending == 0


async def capture_one(
    nats_url: str, s3_env: dict[str, str], url: str, tmp_path: Path
) -> list[object]:
    """One job through a worker: every message it published, up to its CaptureDone."""
    s = settings(nats_url, s3_env)
    async with Harness(nats_url, s, tmp_path) as h, ObjectStore(s) as store:
        await store.ensure_bucket()
        await bus.publish(h.js, JOB_CAPTURE, job(url))
        worker = asyncio.create_task(run_worker(h.config(), h.js, store, h.stop))
        got = await h.results(until_done=1)
        h.stop.set()
        await worker
        return got


async def test_the_host_is_released_after_the_last_hook_that_talks_to_it(
    nats_url: str, s3_env: dict[str, str], site: FixtureServer, tmp_path: Path
) -> None:
    """Once every hook whose plugin declares `x-contacts-host` has ended (navigate and adjust,
    skipped here without a browser; fetch, the last: reddit runs for Reddit links only), the
    worker says so once, as the last one ends (before its final result is sent) and before
    the step 5 and step 8 hooks report: the writer gives the host's slot to its next capture
    while this one post-processes."""
    got = await capture_one(nats_url, s3_env, f"{site.base}/p", tmp_path)
    [(release, said)] = [(i, m) for i, m in enumerate(got) if isinstance(m, HostReleased)]
    assert (said.snapshot_id, said.attempt, said.run) == ("snap1", 1, 1)
    ended = {
        r.plugin: i
        for i, m in enumerate(got)
        if isinstance(m, CaptureEvent)
        for r in m.records
        if isinstance(r, ArchiveResultRecord) and r.status not in ("queued", "started")
    }
    assert max(ended["navigate"], ended["adjust"]) < release < ended["fetch"]
    assert ended["fetch"] < min(ended["screenshot"], ended["metadata"])


@pytest.mark.parametrize("warm", [True, False])
async def test_the_hook_hosts_start_with_the_worker_only_when_it_warms_them(
    nats_url: str, s3_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    warm: bool,
) -> None:  # fmt: skip
    # the archiver warms them for its first capture; the media worker starts them at its
    # first Python hook (its two idle hosts are ~90 MB an archive without videos never uses)
    asked: list[bool] = []

    async def shared_host() -> None:
        asked.append(True)

    monkeypatch.setattr("shared.capture.worker.shared_host", shared_host)
    s = settings(nats_url, s3_env)
    async with Harness(nats_url, s, tmp_path) as h, ObjectStore(s) as store:
        cfg = replace(h.config(), warm_hosts=warm, binaries=[])
        worker = asyncio.create_task(run_worker(cfg, h.js, store, h.stop))
        await h.consumer_reaches(lambda info: (info.num_waiting or 0) >= 1)  # it waits for jobs
        h.stop.set()
        await worker
    assert asked == ([True] if warm else [])


async def test_invalid_job_is_terminated_and_does_not_block(
    nats_url: str, s3_env: dict[str, str], site: FixtureServer, tmp_path: Path
) -> None:
    s = settings(nats_url, s3_env)
    async with Harness(nats_url, s, tmp_path) as h, ObjectStore(s) as store:
        await h.js.publish(JOB_CAPTURE, b'{"job_id": "not a number"}')
        await bus.publish(h.js, JOB_CAPTURE, job(f"{site.base}/p", job_id=2))
        worker = asyncio.create_task(run_worker(h.config(), h.js, store, h.stop))
        got = await h.results(until_done=1)
        h.stop.set()
        await worker
        assert [m.job_id for m in got if isinstance(m, CaptureDone)] == [2]


async def test_s3_down_naks_the_job_and_nothing_is_acked(
    nats_url: str, site: FixtureServer, tmp_path: Path
) -> None:
    (dead,) = free_ports(1)
    dead_s3 = {"S3_ENDPOINT": f"http://127.0.0.1:{dead}", "S3_BUCKET": "nope"}
    s = settings(nats_url, {**dead_s3, "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"})
    async with Harness(nats_url, s, tmp_path) as h, ObjectStore(s) as store:
        await bus.publish(h.js, JOB_CAPTURE, job(f"{site.base}/p", job_id=3))
        worker = asyncio.create_task(run_worker(h.config(), h.js, store, h.stop))
        await h.consumer_reaches(lambda info: (info.num_redelivered or 0) >= 1)
        h.stop.set()
        await worker
        info = await h.js.consumer_info("JOBS", ARCHIVER_JOBS.durable)
        assert info.num_redelivered >= 1, "the job came back after the nak"
        stream = await h.js.stream_info("JOBS")
        assert stream.state.messages == 1, "the job is still in the work queue"
        results = await h.js.stream_info(RESULTS.name)
        dones = [
            CaptureDone.model_validate_json((await h.js.get_msg(RESULTS.name, seq)).data or b"")
            for seq in range(1, results.state.last_seq + 1)
            if (await h.js.get_msg(RESULTS.name, seq)).subject == CAPTURE_DONE
        ]
        assert dones == [], "no attempt is reported done while its files are not stored"


STALL_FOR_GOOD = {
    "FETCH_HEADER_TIMEOUT": "900",
    "FETCH_IDLE_TIMEOUT": "900",
    "FETCH_TIMEOUT": "900",
}
"""The fetch waits on a held request until the test releases it (no timeout ends it first)."""


def held_until(released: threading.Event) -> Behaviour:
    """Reads the request and answers nothing until `released` is set; then the page."""

    def run(sock: socket.socket, stop: threading.Event) -> None:
        while not released.wait(0.1):
            if stop.is_set():
                return
        sock.sendall(head(Content_Type="text/html", Content_Length=len(PAGE)) + PAGE)

    return run


async def test_a_stalling_host_does_not_starve_another_host(
    nats_url: str, s3_env: dict[str, str], site: FixtureServer, tmp_path: Path
) -> None:
    """One slot. Two jobs of a host that stalls, then two of a healthy host: the stalled job
    turns long and is set aside, its host's second job is deferred (nak, redelivered), and
    the healthy host's jobs are captured while the stall still holds; once it ends, all four
    are done, each once, and nothing is left in the work queue."""
    s = settings(nats_url, s3_env)
    released = threading.Event()
    deferred = {"service": "archiver", "outcome": "deferred"}
    deferred_before = REGISTRY.get_sample_value("dla_capture_jobs_total", deferred) or 0
    async with Harness(nats_url, s, tmp_path) as h, ObjectStore(s) as store:
        with RawServer("127.0.0.4") as bad:
            bad.routes["/stall"] = held_until(released)
            base = h.config()
            cfg = replace(
                base, concurrency=1, long_job_s=1, max_long_jobs=1, only_plugins={"fetch"},
                hook_env={**base.hook_env, **STALL_FOR_GOOD},
            )  # fmt: skip
            for job_id, url in enumerate(
                [f"{bad.base}/stall", f"{bad.base}/stall", f"{site.base}/p", f"{site.base}/p"], 1
            ):
                await bus.publish(h.js, JOB_CAPTURE, job(url, job_id))
            worker = asyncio.create_task(run_worker(cfg, h.js, store, h.stop))
            got = await h.results(until_done=2)
            first = [m.job_id for m in got if isinstance(m, CaptureDone)]
            assert sorted(first) == [3, 4], "the healthy host's jobs end first"
            assert [p for p, _ in bad.requests] == ["/stall"], "the stalled host's 2nd job waits"
            released.set()
            got = await h.results(until_done=4)
            h.stop.set()
            await worker
        info = await h.js.consumer_info("JOBS", ARCHIVER_JOBS.durable)
        assert info.num_ack_pending == 0 and info.num_pending == 0
    done = {m.job_id: m for m in got if isinstance(m, CaptureDone)}
    assert sorted(done) == [1, 2, 3, 4] and len(done) == 4, "each job done, once"
    assert done[1].run == 1 and done[2].run > 1, "job 2 came back through JetStream"
    assert (REGISTRY.get_sample_value("dla_capture_jobs_total", deferred) or 0) > deferred_before
    assert [p for p, _ in bad.requests] == ["/stall", "/stall"]
    fetched = {
        e.job_id
        for e in got
        if isinstance(e, CaptureEvent)
        for r in e.records
        if isinstance(r, ArchiveResultRecord) and r.status == "succeeded"
    }
    assert fetched == {1, 2, 3, 4}


async def test_a_stop_hands_back_the_jobs_still_running(
    nats_url: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    """A stop gives the jobs under way `stop_drain_s`, then stops them (hooks killed, scratch
    removed) and naks them: the job is at once there for the next worker, not lost and not
    waiting out the ack deadline."""
    s = settings(nats_url, s3_env)
    released = threading.Event()
    async with Harness(nats_url, s, tmp_path) as h, ObjectStore(s) as store:
        with RawServer("127.0.0.4") as bad:
            bad.routes["/stall"] = held_until(released)
            base = h.config()
            cfg = replace(
                base, concurrency=1, stop_drain_s=0.5, only_plugins={"fetch"},
                hook_env={**base.hook_env, **STALL_FOR_GOOD},
            )  # fmt: skip
            await bus.publish(h.js, JOB_CAPTURE, job(f"{bad.base}/stall"))
            worker = asyncio.create_task(run_worker(cfg, h.js, store, h.stop))
            for _ in range(300):
                if bad.requests:
                    break
                await asyncio.sleep(0.1)
            assert bad.requests, "the job started"
            h.stop.set()
            await asyncio.wait_for(worker, 60)  # a hang guard, not a speed check
            assert not any((tmp_path / "scratch").iterdir()), "the stopped job cleaned up"
            sub = await bus.pull_subscribe(h.js, ARCHIVER_JOBS)
            # well within the consumer's ack wait: only a nak makes it available this soon
            msgs = await bus.fetch(sub, 1, timeout=ARCHIVER_JOBS.ack_wait_s / 2)
            released.set()
        assert len(msgs) == 1 and msgs[0].metadata.num_delivered == 2
        assert CaptureJob.model_validate_json(msgs[0].data).job_id == 1
        await msgs[0].ack()


@pytest.mark.parametrize(
    ("evidence", "wacz", "kinds"),
    [(True, True, {"manifest", "wacz"}), (True, False, {"manifest"}), (False, True, set())],
)
async def test_the_evidence_follows_its_switches(
    nats_url: str, s3_env: dict[str, str], site: FixtureServer, tmp_path: Path,
    evidence: bool, wacz: bool, kinds: set[str],
) -> None:  # fmt: skip
    """EVIDENCE_ENABLED and WACZ_ENABLED: the manifest and WACZ stored, reported and listed,
    the WACZ left out, or no evidence at all (the capture's own files kept either way)."""
    s = settings(nats_url, s3_env)
    async with Harness(nats_url, s, tmp_path) as h, ObjectStore(s) as store:
        await store.ensure_bucket()
        await bus.publish(h.js, JOB_CAPTURE, job(f"{site.base}/p"))
        cfg = replace(h.config(), evidence=evidence, wacz=wacz)
        worker = asyncio.create_task(run_worker(cfg, h.js, store, h.stop))
        got = await h.results(until_done=1)
        h.stop.set()
        await worker
        stored = artifacts_in(got)
        assert any(a.kind == "warc" for a in stored), "the raw fetch's WARC is kept"
        evidence_files = {a.kind: a for a in stored if a.plugin == "evidence"}
        assert set(evidence_files) == kinds
        reports = [m for m in got if isinstance(m, EvidenceReport)]
        assert len(reports) == (1 if evidence else 0)
        if not evidence:
            return
        report = reports[0]
        manifest = await store.get_bytes(report.manifest_key)
        assert report.fingerprint == hashlib.sha256(manifest).hexdigest()
        assert report.verdict == "verified", report.detail
        assert report.wacz_key == (evidence_files["wacz"].s3_key if wacz else None)
        # each named after its own bytes: a key once written never holds other bytes
        assert evidence_files["manifest"].path == manifest_path(report.fingerprint)
        assert json.loads(manifest)["title"] == "t", "the page's title, from its metadata"
        if wacz:
            packaged = await store.get_bytes(report.wacz_key or "")
            assert evidence_files["wacz"].path == wacz_path(hashlib.sha256(packaged).hexdigest())
            with zipfile.ZipFile(io.BytesIO(packaged)) as z:
                page = json.loads(z.read("pages/pages.jsonl").splitlines()[1])
            assert page["title"] == "t", "a replay's page list shows the title, not the URL"


async def test_a_retry_writes_no_key_twice(
    nats_url: str, s3_env: dict[str, str], site: FixtureServer, tmp_path: Path
) -> None:
    """Issue 32: the first attempt's page answers 503 (its fetch fails after the other hooks
    stored theirs), the retry's is another page: its re-run hooks write other bytes under the
    same names, at keys of their own run; every object keeps the bytes its record and the
    manifests that list it say, the first run's meta.json included, and the retry's manifest
    lists its files instead of the earlier attempt's of the same name."""
    s = settings(nats_url, s3_env)
    site.routes["/p"] = Reply(b"<html><title>busy</title><p>try later</p></html>", 503)
    meta = "archives/7/snap32/archiver.meta.json"
    async with Harness(nats_url, s, tmp_path) as h, ObjectStore(s) as store:
        await store.ensure_bucket()
        worker = asyncio.create_task(run_worker(h.config(), h.js, store, h.stop))
        try:
            first = job(f"{site.base}/p", job_id=32)  # its own keys in the shared bucket
            await bus.publish(h.js, JOB_CAPTURE, first)
            got = await h.results(until_done=1)
            (done,) = [m for m in got if isinstance(m, CaptureDone)]
            stored = artifacts_in(got)
            first_meta = await store.get_bytes(meta)
            site.routes["/p"] = Reply(PAGE)
            retry = first.model_copy(update={
                "attempt": 2, "hooks": done.retry_hooks,
                "kept": [a for a in stored if a.plugin != "evidence"]})  # fmt: skip
            await bus.publish(h.js, JOB_CAPTURE, retry)
            records = artifacts_in(await h.results(until_done=2))
        finally:
            h.stop.set()
            await worker
        assert done.retry_hooks == ["fetch/on_Snapshot__41_fetch.py"]
        fetched = {a.path: a for a in stored if a.plugin == "fetch"}
        assert "headers.json" in fetched and any(a.plugin != "fetch" for a in stored)
        refetched = {a.path: a for a in records if a.plugin == "fetch" and a not in stored}
        assert refetched["body.html"].sha256 == hashlib.sha256(PAGE).hexdigest()
        assert refetched["headers.json"].sha256 != fetched["headers.json"].sha256

        # every object of the snapshot has the bytes its record and its manifests say
        for record in records:
            body = await store.get_bytes(record.s3_key)
            assert hashlib.sha256(body).hexdigest() == record.sha256, record.s3_key
        recorded = {r.s3_key: r.sha256 for r in records}
        assert len(recorded) == len(records), "no key written twice"
        for manifest in (r for r in records if r.kind == "manifest"):
            listed = json.loads(await store.get_bytes(manifest.s3_key))
            assert all(recorded[a["key"]] == a["sha256"] for a in listed["artifacts"])
            if listed["attempt"] == 2:  # the newest file of each name: the retry's
                newest = {(a["plugin"], a["path"]): a["key"] for a in listed["artifacts"]}
                assert newest[("fetch", "headers.json")] == refetched["headers.json"].s3_key
                assert set(newest) >= {(a.plugin, a.path) for a in retry.kept}
        assert await store.get_bytes(meta) == first_meta
        retried = "archives/7/snap32/attempt-2.1/"
        run_meta = f"{retried}archiver.meta.json"
        keys = await store.list_keys("archives/7/snap32/")
        assert set(keys) - set(recorded) == {meta, run_meta}
        assert fetched["headers.json"].s3_key == "archives/7/snap32/fetch/headers.json"
        assert refetched["headers.json"].s3_key == f"{retried}fetch/headers.json"


def artifacts_in(got: list[object]) -> list[ArtifactRecord]:
    """The Artifact records among a worker's messages."""
    return [
        r
        for e in got
        if isinstance(e, CaptureEvent)
        for r in e.records
        if isinstance(r, ArtifactRecord)
    ]
