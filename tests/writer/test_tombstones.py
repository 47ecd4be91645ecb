"""Takedowns outlive a backup and restore: tombstones (keyed hashes of the URL's forms) are
kept in the publishable database, and a link created for a taken-down URL is born taken
down. Real SQLite, the real backup (`snapshot_to`) and restore (`install_file`) paths."""

from __future__ import annotations

import gzip
import hashlib
import hmac
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from services.writer import backup, tombstones
from services.writer.db import open_db
from services.writer.job_policy import Policy
from services.writer.settings import WriterSettings
from services.writer.tombstones import TombstoneKey
from shared.hooks.records import ArchiveResultRecord, SnapshotRecord, TextRecord
from shared.messages import RearchiveCommand, SubmitCommand
from testkit.live_writer import LiveWriter
from testkit.writer_harness import T0, Harness, event, occ, post
from tests.writer.test_moderation import art, captured, takedown

URL = "https://news.example/2026/01/owl-sanctuary-location"
VARIANT = "https://News.Example/2026/01/owl-sanctuary-location?utm_source=feed&fbclid=1#top"
"""Another spelling of URL that canonicalises to it (host case, tracking, fragment)."""


def backup_and_restore(h: Harness, db_path: Path, tmp_path: Path, name: str) -> Path:
    """The publishable backup of h's database, installed as a fresh database file (what
    `dla restore FILE` and `python -m services.writer restore` do); returns its raw bytes'
    file (ungzipped) for inspection, the restored database at tmp_path / name."""
    gz = tmp_path / f"{name}.sqlite3.gz"
    backup.snapshot_to(db_path, gz)
    raw = tmp_path / f"{name}.raw.sqlite3"
    raw.write_bytes(gzip.decompress(gz.read_bytes()))
    backup.install_file(gz, tmp_path / name / "archive.sqlite3")
    return raw


def submitted(h: Harness, url: str) -> dict:  # type: ignore[type-arg]
    """A URL submitted (no forum post quotes it) and dispatched: its running job."""
    h.apply(SubmitCommand(url=url, request_id=f"s{len(h.jobs())}", requested_at=T0))
    h.dispatch()
    return dict(h.jobs("running")[-1])


@pytest.fixture
def restored(tmp_path: Path) -> Iterator[list[Harness]]:
    """Harnesses on restored databases, closed at teardown."""
    made: list[Harness] = []
    yield made
    for r in made:
        r.conn.close()


def open_restored(
    tmp_path: Path, name: str, restored: list[Harness], policy: Policy | None = None
) -> Harness:
    r = Harness(open_db(tmp_path / name / "archive.sqlite3"))
    if policy is not None:
        r.policy = policy
    restored.append(r)
    return r


def restored_after_takedown(
    h: Harness, db_path: Path, tmp_path: Path, restored: list[Harness], url: str
) -> Harness:
    """url posted in a forum post, captured and taken down; then a backup restored."""
    job = captured(h, url)
    h.apply(takedown(job["link_id"]))
    backup_and_restore(h, db_path, tmp_path, "r")
    return open_restored(tmp_path, "r", restored)


def test_a_takedown_survives_backup_and_restore(
    h: Harness, db_path: Path, tmp_path: Path, restored: list[Harness]
) -> None:
    job = submitted(h, URL)
    h.apply(event(job, 0, art(job)))
    h.apply(event(job, 1, TextRecord(text="The zanzibarian owls nest in the old quarry.")))
    hook = "on_Snapshot__21_navigate.py"
    said = f"HTTP 200 {URL}"
    result = ArchiveResultRecord(status="succeeded", plugin="navigate", hook=hook, output_str=said)
    h.apply(event(job, 2, result))
    kept = captured(h, "https://x.com/u/status/7")
    h.apply(takedown(job["link_id"]))
    raw = backup_and_restore(h, db_path, tmp_path, "r")

    data = raw.read_bytes()
    # nor any word of it or of its page, even as the full-text index's stems
    for trace in (URL, "news.example", "owl-sanctuary", "sanctuari", "zanzibarian", "quarri"):
        assert trace.encode() not in data, trace
    assert b"court order" not in data

    r = open_restored(tmp_path, "r", restored)
    assert r.tuples("SELECT id FROM links") == [(kept["link_id"],)]
    r.advance(days=30)
    r.apply(post("g-again", occ(URL), content="again"))
    r.apply(post("g-variant", occ(VARIANT), content="variant"))
    r.apply(SubmitCommand(url=VARIANT, request_id="s1", requested_at=T0))
    again = r.rows("SELECT * FROM links WHERE id != ?", kept["link_id"])
    assert len(again) == 1, [dict(x) for x in again]  # the variant found the same new link
    link = again[0]
    assert link["taken_down_at"] is not None  # so services/web/queries/visibility.py hides it
    assert link["canonical_url"] == "https://news.example/2026/01/owl-sanctuary-location"
    jobs = r.rows("SELECT status, reason FROM archive_jobs WHERE link_id = ?", link["id"])
    assert [tuple(j) for j in jobs] == [("skipped_policy", "taken down")] * 3
    assert r.one("SELECT decision FROM submissions WHERE request_id = 's1'") == "skipped_policy"
    assert r.one("SELECT count(*) FROM link_text_fts WHERE rowid = ?", link["id"]) == 0
    r.apply(RearchiveCommand(link_id=link["id"], request_id="r1", requested_at=T0))
    assert r.jobs("queued") == [] and r.dispatch() == []
    # and the next backup of the restored database leaves it out again
    again_raw = backup_and_restore(r, tmp_path / "r" / "archive.sqlite3", tmp_path, "r2")
    assert b"owl-sanctuary" not in again_raw.read_bytes()


def test_a_link_posted_in_a_forum_post_and_taken_down_is_born_taken_down_after_restore(
    h: Harness, db_path: Path, tmp_path: Path, restored: list[Harness]
) -> None:
    r = restored_after_takedown(
        h, db_path, tmp_path, restored, "https://twitter.com/owlwatch/status/77"
    )
    # a site rule's variant: the same canonical URL (x.com), another normalized one
    r.apply(
        SubmitCommand(
            url="https://mobile.twitter.com/owlwatch/status/77?s=20",
            request_id="s1",
            requested_at=T0,
        )
    )
    assert r.tuples("SELECT canonical_url, taken_down_at IS NOT NULL FROM links") == [
        ("https://x.com/owlwatch/status/77", 1)
    ]
    assert r.jobs("queued") == []


def test_a_url_never_taken_down_is_archived_as_before(
    h: Harness, db_path: Path, tmp_path: Path, restored: list[Harness]
) -> None:
    r = restored_after_takedown(h, db_path, tmp_path, restored, "https://x.com/u/status/8")
    r.apply(post("g1", occ("https://x.com/u/status/9")))  # same site, another page
    assert r.one("SELECT taken_down_at FROM links") is None
    assert len(r.jobs("queued")) == 1


def test_a_capture_ending_on_a_taken_down_url_takes_its_link_down(
    h: Harness, db_path: Path, tmp_path: Path, restored: list[Harness]
) -> None:
    r = restored_after_takedown(h, db_path, tmp_path, restored, URL)
    r.apply(post("g1", occ("https://bit.ly/owls")))
    r.dispatch()
    short = dict(r.jobs("running")[0])
    r.apply(event(short, 0, art(short)))
    r.apply(event(short, 1, SnapshotRecord(title="Owls", final_url=VARIANT)))
    r.apply(event(short, 2, art(short, "late")))
    link = r.rows("SELECT * FROM links WHERE id = ?", short["link_id"])[0]
    assert link["taken_down_at"] is not None
    assert r.job(short["id"])["status"] == "failed"
    assert r.one("SELECT count(*) FROM archive_artifacts") == 0
    assert r.one("SELECT count(*) FROM link_metadata") == 0
    keys = r.one("SELECT keys FROM s3_removals WHERE link_id = ?", short["link_id"])
    assert "body" in keys and "late" in keys


def test_sync_tombstones_takedowns_made_before_tombstones_existed(h: Harness) -> None:
    job = captured(h, URL)
    h.apply(takedown(job["link_id"]))
    h.conn.execute("DELETE FROM takedown_tombstones")  # as a database migrated to version 9
    assert tombstones.sync(h.conn, h.policy.takedown_key, "2026-01-02T00:00:00Z") == 0
    forms = tombstones.forms_of_link(h.conn, job["link_id"])
    assert URL in forms
    assert tombstones.matches(h.conn, h.policy.takedown_key, [URL])
    assert h.one("SELECT count(*) FROM takedown_tombstones") == len(forms)


def test_with_a_key_a_backup_confirms_no_guessed_url_and_needs_the_key(
    h: Harness, db_path: Path, tmp_path: Path, restored: list[Harness]
) -> None:
    key = TombstoneKey(b"a secret the owner keeps")
    h.policy = replace(h.policy, takedown_key=key)
    job = submitted(h, URL)  # (a forum post would keep the URL in its own text)
    h.apply(takedown(job["link_id"]))
    raw = backup_and_restore(h, db_path, tmp_path, "r")
    data = raw.read_bytes()
    # without the key, no hash of the URL one could compute is in the backup
    for guess in (hmac.new(b"", URL.encode(), hashlib.sha256), hashlib.sha256(URL.encode())):
        assert guess.hexdigest().encode() not in data
    assert key.digest(URL).encode() in data

    wrong = open_restored(tmp_path, "r", restored, replace(h.policy, takedown_key=TombstoneKey()))
    assert tombstones.sync(wrong.conn, wrong.policy.takedown_key, "2026-01-02T00:00:00Z") > 0
    assert not tombstones.matches(wrong.conn, wrong.policy.takedown_key, [URL])

    right = open_restored(tmp_path, "r", restored, replace(h.policy, takedown_key=key))
    assert tombstones.sync(right.conn, key, "2026-01-02T00:00:00Z") == 0
    right.apply(post("g-again", occ(VARIANT)))
    assert right.tuples("SELECT canonical_url, taken_down_at IS NOT NULL FROM links") == [(URL, 1)]
    assert right.jobs("queued") == []


def test_the_key_comes_from_takedown_key_and_never_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAKEDOWN_KEY", "s3cret-tombstone-key")
    policy = WriterSettings().policy()
    assert policy.takedown_key == TombstoneKey(b"s3cret-tombstone-key")
    assert "s3cret" not in repr(policy)
    monkeypatch.delenv("TAKEDOWN_KEY")
    assert WriterSettings().policy().takedown_key == TombstoneKey()


@pytest.mark.integration
async def test_the_writer_tombstones_its_takedowns_at_start_and_tells_of_another_key(
    tmp_path: Path, nats_url: str, live_writer: Callable[..., LiveWriter]
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    h = Harness(open_db(data / "archive.sqlite3"))
    job = captured(h, URL)
    h.apply(takedown(job["link_id"]))
    # as a database taken down before tombstones existed, plus one made under another key
    h.conn.execute("DELETE FROM takedown_tombstones")
    tombstones.record(
        h.conn, TombstoneKey(b"the key of another day"), ["https://gone.example/"], "x"
    )
    h.conn.close()
    secret = "tombstone-key-of-the-writer"
    writer = live_writer(data, nats_url, {"TAKEDOWN_KEY": secret}).start()
    key = TombstoneKey(secret.encode())
    mine = "SELECT count(*) FROM takedown_tombstones WHERE key_id = ?"
    writer.wait_for(lambda: writer.query(mine, key.key_id)[0][0] > 0, 30, "tombstones")
    assert writer.query("SELECT 1 FROM takedown_tombstones WHERE digest = ?", key.digest(URL))
    async with httpx.AsyncClient(timeout=5) as client:
        metrics = (await client.get(f"{writer.metrics_url}/metrics")).text
    assert "dla_writer_tombstones_other_key 1.0" in metrics
    log = writer.log_path.read_text()
    assert "made under another TAKEDOWN_KEY" in log
    assert secret not in log
