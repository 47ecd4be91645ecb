"""Admin decisions in the writer: takedown, exclude, retry — and the audit trail."""

from __future__ import annotations

import gzip
import sqlite3
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from services.writer import backup, backup_rows, moderation
from services.writer.clock import iso
from services.writer.housekeeping import Housekeeping
from services.writer.settings import WriterSettings
from shared.hooks.records import ArchiveResultRecord, ArtifactRecord, MetadataRecord, TextRecord
from shared.messages import (
    ExcludeCommand,
    IncludeCommand,
    RetryCommand,
    SubmitCommand,
    TakedownCommand,
    UndoTakedownCommand,
)
from testkit.writer_harness import T0, Harness, done, dump, event, occ, post, retry_waiting


def art(job, name: str = "body") -> ArtifactRecord:  # type: ignore[no-untyped-def]
    return ArtifactRecord(
        plugin="fetch",
        kind="raw_response",
        path=name,
        s3_key=f"archives/{job['link_id']}/{job['snapshot_id']}/fetch/{name}",
        content_type="text/html",
        bytes=10,
        sha256="a" * 64,
    )


def captured(h: Harness, url: str = "https://x.com/u/status/1") -> dict:  # type: ignore[type-arg]
    h.apply(post(f"g{len(h.jobs())}", occ(url)))
    h.dispatch()
    job = dict(h.jobs()[-1])
    h.apply(event(job, 0, art(job)))
    h.apply(event(job, 1, MetadataRecord(title="Owls at dusk")))
    h.apply(event(job, 2, TextRecord(text="barn owls hunt mice")))
    h.apply(done(job, records=3))
    return job


def takedown(link_id: int, rid: str = "t1") -> TakedownCommand:
    return TakedownCommand(
        link_id=link_id, reason="court order", admin="alice", request_id=rid, requested_at=T0
    )


NOT_THE_LINK = ("admin_audit", "processed_messages", "takedown_tombstones", "takedown_holds")
"""Tables a takedown and its undo write besides the link's own rows."""


def undo(link_id: int, rid: str = "u1") -> UndoTakedownCommand:
    return UndoTakedownCommand(
        link_id=link_id, reason="appeal granted", admin="bob", request_id=rid, requested_at=T0
    )


def test_takedown_hides_at_once_keeps_everything_for_the_window_and_audits(h: Harness) -> None:
    job = captured(h)
    before = dump(h.conn, skip=(*NOT_THE_LINK, "links"))
    h.apply(takedown(job["link_id"]))
    assert h.one("SELECT taken_down_at FROM links") is not None
    # nothing captured is deleted yet, nothing queued for S3: an undo can show it again
    assert dump(h.conn, skip=(*NOT_THE_LINK, "links")) == before
    assert h.one("SELECT count(*) FROM s3_removals") == 0
    assert h.tuples("SELECT link_id, request_id, purge_after FROM takedown_holds") == [
        (job["link_id"], "t1", iso(T0 + timedelta(days=7)))
    ]
    assert h.tuples("SELECT action, target, reason, admin, outcome FROM admin_audit") == [
        ("takedown", f"link {job['link_id']}", "court order", "alice", "done")
    ]
    assert "kept until" in h.one("SELECT detail FROM admin_audit")
    # idempotent: the same request again changes nothing
    h.apply(takedown(job["link_id"]))
    assert h.one("SELECT count(*) FROM admin_audit") == 1
    # the window is not over: the housekeeping's purge leaves it
    h.advance(days=6, hours=23)
    assert h.purge() == []
    assert h.one("SELECT count(*) FROM archive_artifacts") == 1


def test_an_undo_within_the_window_shows_the_link_exactly_as_before(h: Harness) -> None:
    job = captured(h)
    before = dump(h.conn, skip=NOT_THE_LINK)
    h.apply(takedown(job["link_id"]))
    h.advance(days=6)
    h.apply(undo(job["link_id"]))
    assert dump(h.conn, skip=NOT_THE_LINK) == before
    assert h.one("SELECT count(*) FROM takedown_holds") == 0
    assert h.one("SELECT count(*) FROM takedown_tombstones") == 0
    assert h.tuples("SELECT action, admin, reason, outcome FROM admin_audit ORDER BY id") == [
        ("takedown", "alice", "court order", "done"),
        ("undo", "bob", "appeal granted", "done"),
    ]
    # its URL is no longer refused: a new post of it counts for the link again
    h.advance(days=2)
    h.apply(post("g-again", occ("https://x.com/u/status/1"), content="again"))
    assert h.purge() == []
    assert h.one("SELECT count(*) FROM link_occurrences") == 2
    assert "taken down" not in {j["reason"] for j in h.jobs()}


def test_after_the_window_an_undo_is_refused_and_the_purge_deletes(h: Harness) -> None:
    job = captured(h)
    link_id = job["link_id"]
    h.apply(takedown(link_id))
    h.advance(days=7)
    h.apply(undo(link_id))
    refused = h.one("SELECT detail FROM admin_audit WHERE action = 'undo'")
    assert "undo window (TAKEDOWN_UNDO_DAYS) ended" in refused
    assert h.one("SELECT outcome FROM admin_audit WHERE action = 'undo'") == "rejected"
    assert h.one("SELECT taken_down_at FROM links") is not None
    assert h.purge() == [link_id]
    assert h.one("SELECT count(*) FROM archive_artifacts") == 0
    assert h.one("SELECT count(*) FROM link_metadata") == 0
    assert h.one("SELECT count(*) FROM link_text_fts") == 0
    assert h.one("SELECT link_id FROM s3_removals") == link_id
    assert moderation.pending_removals(h.conn) == [(link_id, '["' + art(job).s3_key + '"]', True)]
    assert h.tuples("SELECT action, admin, outcome FROM admin_audit WHERE action = 'purge'") == [
        ("purge", "writer", "done")
    ]
    assert h.purge() == []  # once
    h.apply(undo(link_id, "u2"))
    assert "was purged" in h.one("SELECT detail FROM admin_audit WHERE request_id = 'u2'")


def test_an_undo_of_a_link_not_taken_down_is_refused(h: Harness) -> None:
    job = captured(h)
    h.apply(undo(job["link_id"]), undo(999, "u2"))
    assert h.tuples("SELECT outcome, detail FROM admin_audit ORDER BY id") == [
        ("rejected", f"link {job['link_id']} is not taken down"),
        ("rejected", "no link 999"),
    ]


def test_with_no_undo_window_a_takedown_purges_at_once(h: Harness) -> None:
    h.policy = replace(h.policy, takedown_undo=timedelta(0))
    job = captured(h)
    h.apply(takedown(job["link_id"]))
    assert h.one("SELECT count(*) FROM archive_artifacts") == 0
    assert h.one("SELECT count(*) FROM link_text_fts") == 0
    assert h.one("SELECT link_id FROM s3_removals") == job["link_id"]
    assert h.one("SELECT count(*) FROM takedown_holds") == 0
    assert "purged at once" in h.one("SELECT detail FROM admin_audit")


def test_a_taken_down_link_is_never_captured_again(h: Harness) -> None:
    job = captured(h)
    h.apply(takedown(job["link_id"]))
    h.advance(days=30)
    url = "https://x.com/u/status/1"
    h.apply(post("g-again", occ(url), content="again"))
    h.apply(SubmitCommand(url=url, request_id="s1", requested_at=T0))
    assert h.jobs("queued") == []
    assert {j["reason"] for j in h.jobs("skipped_policy")} == {"taken down"}
    assert h.one("SELECT decision FROM submissions") == "skipped_policy"


def test_takedown_of_a_running_capture_drops_its_late_results(h: Harness) -> None:
    h.apply(post("g1", occ("https://x.com/u/status/2")))
    h.dispatch()
    job = dict(h.jobs()[-1])
    h.apply(takedown(job["link_id"]))
    assert h.job(job["id"])["status"] == "failed"
    h.apply(event(job, 0, art(job, "late"), more=[MetadataRecord(title="t"), art(job, "later")]))
    h.apply(done(job, records=1))
    assert h.one("SELECT count(*) FROM archive_artifacts") == 0
    keys = h.one("SELECT keys FROM s3_removals")
    assert "late" in keys and "later" in keys  # every file of the event
    assert h.job(job["id"])["status"] == "failed"
    # kept while the takedown can be undone; removed with the link's prefix after
    assert moderation.pending_removals(h.conn) == []
    h.advance(days=8)
    h.purge()
    assert [r[0] for r in moderation.pending_removals(h.conn)] == [job["link_id"]]


def test_takedown_of_an_unknown_link_is_audited_as_rejected(h: Harness) -> None:
    h.apply(takedown(999))
    assert h.tuples("SELECT outcome, detail FROM admin_audit") == [("rejected", "unknown link")]


def test_exclude_blocks_the_domain_and_drops_its_queued_jobs(h: Harness) -> None:
    h.apply(post("g1", occ("https://www.blocked.example/a")))
    assert len(h.jobs("queued")) == 1
    h.apply(
        ExcludeCommand(
            domain="blocked.example", reason="spam", admin="bob", request_id="e1", requested_at=T0
        )
    )
    assert h.jobs("queued") == []
    h.apply(post("g2", occ("https://sub.blocked.example/b")))
    assert h.jobs("queued") == []
    assert h.jobs()[-1]["reason"] == "domain blocked.example excluded"
    assert h.tuples("SELECT action, target, admin FROM admin_audit") == [
        ("exclude", "blocked.example", "bob")
    ]


def exclude(domain: str, rid: str) -> ExcludeCommand:
    return ExcludeCommand(
        domain=domain, reason="spam", admin="bob", request_id=rid, requested_at=T0
    )


def include(domain: str, rid: str) -> IncludeCommand:
    return IncludeCommand(
        domain=domain, reason="not spam", admin="alice", request_id=rid, requested_at=T0
    )


def test_an_exclusion_lifted_captures_the_domain_again_from_then_on(h: Harness) -> None:
    h.apply(post("g1", occ("https://blocked.example/a")))
    h.apply(exclude("blocked.example", "e1"))
    assert h.tuples("SELECT status, last_error FROM archive_jobs") == [
        ("failed", "domain blocked.example excluded")
    ]
    h.apply(include("blocked.example", "i1"))
    assert h.one("SELECT count(*) FROM excluded_domains") == 0
    # what the exclusion failed stays failed; a new post of the domain is captured
    assert h.jobs("queued") == []
    h.apply(post("g2", occ("https://blocked.example/b")))
    assert [j["link_id"] for j in h.jobs("queued")] == [2]
    # and a retry of the domain queues the link it failed
    h.apply(RetryCommand(domain="blocked.example", admin="alice", request_id="r1", requested_at=T0))
    assert sorted(j["link_id"] for j in h.jobs("queued")) == [1, 2]
    h.apply(include("blocked.example", "i1"))  # the same request again: audited once
    assert h.tuples("SELECT action, target, reason, admin, outcome FROM admin_audit") == [
        ("exclude", "blocked.example", "spam", "bob", "done"),
        ("include", "blocked.example", "not spam", "alice", "done"),
        ("retry", "blocked.example", "", "alice", "done"),
    ]


def test_lifting_an_exclusion_no_admin_made_is_refused_and_a_parent_one_still_holds(
    h: Harness,
) -> None:
    h.apply(exclude("example.org", "e1"), exclude("sub.example.org", "e2"))
    h.apply(include("other.example", "i1"), include("sub.example.org", "i2"))
    assert h.tuples("SELECT outcome, detail FROM admin_audit WHERE action = 'include'") == [
        ("rejected", "not excluded"),
        ("done", "lifted, but example.org is still excluded (it covers sub.example.org)"),
    ]
    h.apply(post("g1", occ("https://sub.example.org/a")))
    assert h.tuples("SELECT status, reason FROM archive_jobs") == [
        ("skipped_policy", "domain example.org excluded")
    ]


def test_retry_queues_failed_links_of_a_domain(h: Harness) -> None:
    h.policy = replace(h.policy, max_attempts=1)
    for n, url in enumerate(["https://a.example/1", "https://b.example/2"]):
        h.apply(post(f"g{n}", occ(url)))
    h.dispatch()
    for job in h.jobs("running"):
        h.apply(done(job, error="storage down"))
    failed = {r[0] for r in h.tuples("SELECT domain FROM links WHERE status = 'failed'")}
    assert failed == {"a.example", "b.example"}, h.tuples("SELECT domain, status FROM links")
    h.apply(RetryCommand(domain="a.example", admin="alice", request_id="r1", requested_at=T0))
    queued = h.rows(
        "SELECT l.domain FROM archive_jobs j JOIN links l ON l.id = j.link_id"
        " WHERE j.status = 'queued'"
    )
    assert [r[0] for r in queued] == ["a.example"]
    assert h.one("SELECT detail FROM admin_audit") == "1 link(s) queued"


def broken_and_declined(h: Harness) -> tuple[sqlite3.Row, sqlite3.Row]:
    """Two failed links of a.example: a 404, and a page that asked not to be archived."""
    for n, url in enumerate(["https://a.example/broken", "https://a.example/opted-out"]):
        h.apply(post(f"g{n}", occ(url)))
    h.dispatch()
    broken, opted = h.jobs("running")
    nav = "on_Snapshot__21_navigate.py"
    for job, code in ((broken, "E_NAVIGATE_HTTP_404"), (opted, "E_NAVIGATE_DECLINED")):
        result = ArchiveResultRecord(status="failed", plugin="navigate", hook=nav,
                                     error_code=code)  # fmt: skip
        h.apply(event(job, 0, result), done(job, records=1))
    assert h.tuples("SELECT status FROM links ORDER BY id") == [("failed",), ("failed",)]
    return broken, opted


def test_retry_leaves_alone_a_link_whose_page_asked_not_to_be_archived(h: Harness) -> None:
    """A decline is not a failure: a retry of every failed link does not fetch the page
    again (`dla rearchive` of that one link still does)."""
    broken, _ = broken_and_declined(h)
    h.apply(RetryCommand(admin="alice", request_id="r3", requested_at=T0))
    queued = "SELECT link_id FROM archive_jobs WHERE status = 'queued'"
    assert h.tuples(queued) == [(broken["link_id"],)]
    assert h.one("SELECT detail FROM admin_audit") == "1 link(s) queued"


def test_retry_gives_a_failed_video_link_its_download_again(h: Harness) -> None:
    """`dla retry` queues what a new post of the link would: the capture and, for a video
    link whose download failed too, the media job."""
    h.policy = replace(h.policy, max_attempts=1, media_jobs=True)
    h.apply(post("v", occ("https://www.youtube.com/watch?v=Fict10nal00")))
    h.dispatch()
    for job in h.jobs("running"):
        h.apply(done(job, error="storage down"))
    kinds = "SELECT kind, status FROM archive_jobs ORDER BY id"
    assert h.tuples(kinds) == [("capture", "failed"), ("media", "failed")]
    h.apply(RetryCommand(admin="alice", request_id="r2", requested_at=T0))
    assert h.tuples(kinds)[2:] == [("capture", "queued"), ("media", "queued")]
    assert h.one("SELECT status FROM media_items") == "pending"


def test_the_publishable_backup_leaves_out_taken_down_links_and_the_audit(
    h: Harness, db_path: Path, tmp_path: Path
) -> None:
    kept = captured(h, "https://x.com/u/status/7")
    gone = captured(h, "https://x.com/u/status/8")
    h.apply(takedown(gone["link_id"]))
    dest = tmp_path / "backup.sqlite3.gz"
    backup.snapshot_to(db_path, dest)
    raw = tmp_path / "b.sqlite3"
    raw.write_bytes(gzip.decompress(dest.read_bytes()))
    conn = sqlite3.connect(raw)
    ids = [r[0] for r in conn.execute("SELECT id FROM links")]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    occurrences = conn.execute("SELECT DISTINCT link_id FROM link_occurrences").fetchall()
    # the forum's own posts still quote the URL (they are the forum's, public there); nothing
    # else does
    mentions = [
        t
        for t in tables
        if t != "discourse_posts"
        and not t.startswith("link_text_fts_")
        and any("status/8" in repr(r) for r in conn.execute(f'SELECT * FROM "{t}"'))
    ]
    private = [
        conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in backup_rows.PRIVATE_TABLES
    ]
    conn.close()
    assert private == [0, 0, 0]
    assert mentions == []
    assert ids == [kept["link_id"]]
    assert occurrences == [(kept["link_id"],)]
    assert b"court order" not in raw.read_bytes()


async def test_the_housekeeping_purges_by_its_clock(h: Harness, tmp_path: Path) -> None:
    """The writer's housekeeping asks `purge_due` with its own clock (injected here: no
    waiting for a week)."""
    job = captured(h)
    h.apply(takedown(job["link_id"]))

    async def with_conn(fn, *args):  # type: ignore[no-untyped-def]
        return fn(h.conn, *args)

    settings = WriterSettings.model_validate({"data_dir": tmp_path})
    early = Housekeeping(settings, with_conn, clock=lambda: T0 + timedelta(days=6))
    await early.purge_taken_down()
    assert h.one("SELECT count(*) FROM takedown_holds") == 1
    late = Housekeeping(settings, with_conn, clock=lambda: T0 + timedelta(days=7, seconds=1))
    await late.purge_taken_down()
    assert h.one("SELECT count(*) FROM takedown_holds") == 0
    assert h.one("SELECT link_id FROM s3_removals") == job["link_id"]


def test_a_hidden_link_keeps_its_liveness_schedule_for_an_undo(h: Harness) -> None:
    job = captured(h)
    schedule = h.tuples("SELECT * FROM liveness_schedule")
    assert schedule, "an archived link is watched"
    h.apply(takedown(job["link_id"]))
    h.advance(days=2)  # its first check is due: not dispatched, not forgotten
    assert h.checks() == []
    assert h.tuples("SELECT * FROM liveness_schedule") == schedule
    h.apply(undo(job["link_id"]))
    assert [c.link_id for c in h.checks()] == [job["link_id"]]


def test_retry_makes_a_failed_links_waiting_retry_due_now(h: Harness) -> None:
    """A failed link whose retry is queued for later (a 503, retried in 5 min to 12 h) is
    what `dla retry` is for: its queued job is made due now, not skipped as in flight."""
    retry_waiting(h, "https://a.example/slow")
    assert h.one("SELECT status FROM links") == "failed"
    h.advance(minutes=1)
    h.apply(RetryCommand(admin="alice", request_id="r1", requested_at=T0))
    (job,) = h.jobs()
    assert (job["status"], job["not_before"]) == ("queued", iso(h.now))
    assert h.one("SELECT detail FROM admin_audit") == "1 link(s) queued"
