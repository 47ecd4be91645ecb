"""CaptureEvent: every hook record type lands in its table, idempotently and in order."""

from __future__ import annotations

from datetime import timedelta

from prometheus_client import REGISTRY

from shared.hooks.records import (
    ArchiveResultRecord,
    ArtifactRecord,
    BinaryRecord,
    MetadataRecord,
    SnapshotRecord,
    TagRecord,
    TextRecord,
)
from testkit.writer_harness import Harness, event, occ, post

URL = "https://www.reddit.com/r/x/comments/abc/title/"


def running_job(h: Harness):
    h.apply(post("g1", occ(URL)))
    h.dispatch()
    return h.job(1)


def result(status: str, hook: str = "on_Snapshot__41_fetch.py", **kw) -> ArchiveResultRecord:
    return ArchiveResultRecord(status=status, plugin="fetch", hook=hook, **kw)  # type: ignore[arg-type]


def test_archive_results_upsert_per_hook_and_never_go_back(h: Harness) -> None:
    job = running_job(h)
    h.apply(event(job, 0, result("started")))
    h.apply(event(job, 1, result("succeeded", output_str="HTTP 200", exit_code=0)))
    # A late record from an earlier run of the same attempt does not overwrite the newer one.
    h.apply(event(job, 0, result("failed", output_str="old"), run=0))
    rows = h.rows("SELECT * FROM archive_results")
    assert len(rows) == 1
    assert (rows[0]["status"], rows[0]["output_str"], rows[0]["exit_code"]) == (
        "succeeded",
        "HTTP 200",
        0,
    )
    assert h.one("SELECT status FROM snapshots") == "started"


def test_records_sent_together_are_applied_in_order(h: Harness) -> None:
    job = running_job(h)
    other = "on_Snapshot__50_dom.py"
    began = h.now
    # the queued results ride with the first hook's final one (it never reported started)
    h.apply(
        event(
            job,
            0,
            result("queued"),
            more=[result("queued", hook=other), result("succeeded", started_at=began)],
        )
    )
    assert h.tuples("SELECT hook, status FROM archive_results ORDER BY hook") == [
        ("on_Snapshot__41_fetch.py", "succeeded"),
        (other, "queued"),
    ]
    # a final result with its start is the snapshot's word that a hook started
    assert h.one("SELECT status FROM snapshots") == "started"
    assert h.one("SELECT count(*) FROM processed_messages WHERE subject = 'capture.result'") == 1


def test_a_final_result_with_its_start_is_counted(h: Harness) -> None:
    labels = {"plugin": "fetch", "status": "failed", "error_code": "E_FETCH_RECORDS_TEST"}
    before = REGISTRY.get_sample_value("dla_writer_hook_results_total", labels) or 0
    job = running_job(h)
    h.apply(event(job, 0, result("failed", error_code="E_FETCH_RECORDS_TEST", started_at=h.now)))
    after = REGISTRY.get_sample_value("dla_writer_hook_results_total", labels)
    assert after == before + 1


def test_queued_results_alone_leave_the_snapshot_queued(h: Harness) -> None:
    job = running_job(h)
    h.apply(event(job, 0, result("queued"), more=[result("skipped", hook="x.py")]))
    assert h.one("SELECT status FROM snapshots") == "queued"


def test_every_attempt_of_a_hook_keeps_its_result(h: Harness) -> None:
    job = running_job(h)
    h.apply(event(job, 0, result("failed", output_str="timeout", error_code="E_FETCH_TIMEOUT")))
    h.apply(event(job, 0, result("succeeded", output_str="HTTP 200"), attempt=2))
    h.apply(event(job, 1, result("failed", output_str="late", attempt=1), attempt=1, run=0))
    history = h.tuples(
        "SELECT attempt, status, error_code, output_str FROM archive_result_attempts"
        " ORDER BY attempt"
    )
    assert history == [
        (1, "failed", "E_FETCH_TIMEOUT", "timeout"),
        (2, "succeeded", None, "HTTP 200"),
    ]
    current = h.tuples("SELECT attempts, status FROM archive_results")
    assert current == [(2, "succeeded")]


def test_artifact_rows_are_unique_by_key(h: Harness) -> None:
    job = running_job(h)
    art = ArtifactRecord(
        plugin="fetch",
        kind="raw_response",
        path="body",
        s3_key=f"a/{job['snapshot_id']}/body",
        content_type="text/html",
        bytes=10,
        sha256="a" * 64,
    )
    h.apply(event(job, 0, art))
    h.apply(event(job, 0, art, run=2))  # the same record again (a redelivered event)
    # a key is written once: the sha256 first recorded for it is never replaced
    h.apply(event(job, 1, art.model_copy(update={"bytes": 11, "sha256": "b" * 64}), run=2))
    rows = h.rows("SELECT * FROM archive_artifacts")
    assert len(rows) == 1
    assert (rows[0]["link_id"], rows[0]["bytes"], rows[0]["sha256"]) == (1, 10, "a" * 64)
    assert rows[0]["snapshot_id"] == job["snapshot_id"] and rows[0]["plugin"] == "fetch"


def test_metadata_text_and_snapshot_title_feed_the_search_index(h: Harness) -> None:
    job = running_job(h)
    h.apply(event(job, 0, SnapshotRecord(title="Snapshot title")))
    assert h.one("SELECT title FROM link_metadata") == "Snapshot title"
    h.apply(
        event(job, 1, MetadataRecord(title="A thread about owls", description="d", language="en"))
    )
    h.apply(event(job, 2, MetadataRecord(author="bob")))
    h.apply(event(job, 3, TextRecord(text="Barn owls hunt mice at dusk.")))
    meta = h.rows("SELECT * FROM link_metadata")[0]
    assert (meta["title"], meta["description"], meta["author"], meta["language"]) == (
        "A thread about owls",
        "d",
        "bob",
        "en",
    )
    hits = h.tuples(
        "SELECT link_id, title, url, domain FROM link_text_fts WHERE link_text_fts MATCH ?", "mice"
    )
    assert hits == [
        (
            1,
            "A thread about owls",
            "https://old.reddit.com/r/x/comments/abc/title/",
            "old.reddit.com",
        )
    ]
    assert h.one("SELECT count(*) FROM link_text_fts WHERE link_text_fts MATCH 'owls'") == 1
    assert h.one("SELECT title FROM snapshots") == "Snapshot title"


def test_metadata_keeps_the_pages_own_links(h: Harness) -> None:
    job = running_job(h)
    links = {
        "canonical_url": "https://example.org/story",
        "favicon": "https://example.org/icon.png",
        "image": "https://img.example.org/a.jpg",
    }
    h.apply(event(job, 0, MetadataRecord(title="t", **links)))
    h.apply(event(job, 1, MetadataRecord(image="https://img.example.org/b.jpg")))
    meta = h.rows("SELECT * FROM link_metadata")[0]
    assert {k: meta[k] for k in links} == {**links, "image": "https://img.example.org/b.jpg"}
    assert meta["title"] == "t"


def test_tags_and_binaries(h: Harness) -> None:
    job = running_job(h)
    h.apply(event(job, 0, TagRecord(name="video")), event(job, 1, TagRecord(name="video")))
    h.apply(event(job, 2, BinaryRecord(name="yt-dlp", abspath="/usr/bin/yt-dlp", version="1")))
    h.apply(
        event(
            job,
            3,
            BinaryRecord(name="yt-dlp", abspath="/usr/bin/yt-dlp", version="1", machine="m2"),
        )
    )
    h.apply(
        event(
            job,
            4,
            BinaryRecord(name="yt-dlp", abspath="/usr/bin/yt-dlp", version="1", status="failed"),
        )
    )
    assert h.tuples("SELECT link_id, name FROM link_tags") == [(1, "video")]
    assert h.tuples("SELECT machine, name, status FROM binaries ORDER BY machine") == [
        ("host-a", "yt-dlp", "failed"),
        ("m2", "yt-dlp", "succeeded"),
    ]


def test_events_are_a_sign_of_life_that_moves_the_deadline(h: Harness) -> None:
    job = running_job(h)
    first = h.job(1)["deadline"]
    h.advance(minutes=10)
    h.apply(event(job, 0, result("started")))
    assert h.job(1)["deadline"] > first
    h.advance(minutes=1)
    h.apply(event(job, 1, result("succeeded")))
    assert h.job(1)["deadline"] == (h.now - timedelta(minutes=1) + h.policy.job_deadline).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ"
    )


def test_an_event_for_an_unknown_link_is_dropped(h: Harness) -> None:
    fake = {"id": 99, "link_id": 99, "snapshot_id": "nope", "attempts": 1}
    res = h.apply(event(fake, 0, TagRecord(name="x")))
    assert len(res.applied) == 1
    assert h.one("SELECT count(*) FROM link_tags") == 0
    assert h.one("SELECT count(*) FROM snapshots") == 0


def test_an_event_for_a_snapshot_the_database_never_saw_creates_it(h: Harness) -> None:
    running_job(h)
    fake = {"id": 77, "link_id": 1, "snapshot_id": "from-elsewhere", "attempts": 1}
    h.apply(event(fake, 0, result("succeeded")))
    assert h.tuples("SELECT id, link_id, job_id FROM snapshots WHERE id = 'from-elsewhere'") == [
        ("from-elsewhere", 1, None)
    ]
