"""A capture made with the site's cookies keeps its session files (traffic WARC, WACZ, raw
response, DOM) private: listed with a lock, served only with the admin token, left out of
the publishable backup; its screenshot stays public. PUBLISH_LOGGED_IN_CAPTURES=true keeps
them public. (The writer's real apply path, the web in-process; the whole stack with a real
logged-in page: tests/e2e/test_logged_in.py.)"""

from __future__ import annotations

import dataclasses
import hashlib
import sqlite3
from pathlib import Path

import pytest

from services.supervisor.cli.errors import CliError
from services.supervisor.cli.stack_client import stack_client
from services.web.state import WebState
from services.writer import backup
from services.writer.db import open_db
from services.writer.settings import WriterSettings
from shared.hooks.records import ArchiveResultRecord, ArtifactRecord, HookRecord, SnapshotRecord
from testkit.writer_harness import Harness, done, event, occ, post
from tests.web.conftest import client_for, web_settings
from tests.web.test_browser import live_app

URL = "https://x.com/ada_example/status/1790000000000000011"
FILES = {  # kind: (plugin, path)
    "warc": ("traffic", "browser.warc.gz"),
    "dom": ("dom", "dom.html"),
    "raw_response": ("fetch", "body.html"),
    "wacz": ("evidence", "capture.wacz"),
    "screenshot": ("screenshot", "screenshot.png"),
}
PRIVATE = {"warc", "dom", "raw_response", "wacz"}


def archive(data: Path, *, publish: bool = False) -> Path:
    """A database with one link captured logged in (the navigate hook said so)."""
    db = data / "archive.sqlite3"
    h = Harness(open_db(db))
    h.policy = dataclasses.replace(h.policy, publish_logged_in_captures=publish)
    h.apply(post("g1", occ(URL)))
    (job,) = (h.job(j.job_id) for j in h.dispatch())
    records: list[HookRecord] = [SnapshotRecord(final_url=URL, logged_in=True)]
    for kind, (plugin, path) in FILES.items():
        digest = hashlib.sha256(path.encode()).hexdigest()
        key = f"archives/1/s/{plugin}/{path}"
        ctype = "application/octet-stream"
        records.append(ArtifactRecord(plugin=plugin, kind=kind, path=path, s3_key=key,
                                      content_type=ctype, bytes=1, sha256=digest))  # fmt: skip
    nav = ArchiveResultRecord(
        status="succeeded", plugin="navigate", hook="on_Snapshot__21_navigate.py"
    )
    records.append(nav)
    h.apply(*(event(job, i, r) for i, r in enumerate(records)), done(job, records=len(records)))
    h.conn.close()
    return db


async def test_the_session_files_of_a_logged_in_capture_are_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive(tmp_path)
    monkeypatch.setenv("ADMIN_TOKEN", "sesame")
    state = WebState.of(web_settings(tmp_path))
    async with client_for(state) as c:
        link = (await c.get("/links/1.json")).json()
        private = {a["kind"] for a in link["artifacts"] if a["private"]}
        assert private == PRIVATE
        for a in link["artifacts"]:
            public = await c.get(a["url"])
            if a["kind"] in PRIVATE:
                assert public.status_code == 401, a
                admin = await c.get(a["url"], headers={"authorization": "Bearer sesame"})
                assert admin.status_code not in (401, 403), a  # past the gate (S3 is absent)
            else:
                assert public.status_code not in (401, 403), a
        page = (await c.get("/links/1", headers={"accept": "text/html"})).text
        assert page.count("🔒 private") == len(PRIVATE)
    state.db.dispose()


async def test_publish_logged_in_captures_keeps_them_public(tmp_path: Path) -> None:
    archive(tmp_path, publish=True)
    state = WebState.of(web_settings(tmp_path))
    async with client_for(state) as c:
        link = (await c.get("/links/1.json")).json()
        assert not any(a["private"] for a in link["artifacts"])
        assert "🔒" not in (await c.get("/links/1", headers={"accept": "text/html"})).text
    state.db.dispose()


def test_no_backup_holds_them_but_its_private_part_gives_them_back(tmp_path: Path) -> None:
    db = archive(tmp_path)
    gz, private = tmp_path / "public.sqlite3.gz", tmp_path / "private.sqlite3.gz"
    backup.snapshot_to(db, gz, private)
    copy = tmp_path / "copy.sqlite3"
    backup._gunzip(gz, copy)
    kinds = "SELECT kind FROM archive_artifacts"
    with sqlite3.connect(copy) as conn:
        assert {r[0] for r in conn.execute(kinds)} == {"screenshot"}
    restored = tmp_path / "restored" / "archive.sqlite3"  # the owner's restore
    backup.install_file(gz, restored, private)
    with sqlite3.connect(restored) as conn:
        assert {r[0] for r in conn.execute(kinds)} == PRIVATE | {"screenshot"}


def test_the_setting_is_publish_logged_in_captures(monkeypatch: pytest.MonkeyPatch) -> None:
    assert WriterSettings().policy().publish_logged_in_captures is False
    monkeypatch.setenv("PUBLISH_LOGGED_IN_CAPTURES", "true")
    assert WriterSettings().policy().publish_logged_in_captures is True


def test_dla_downloads_a_private_file_with_the_admin_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive(tmp_path)
    monkeypatch.setenv("ADMIN_TOKEN", "sesame")
    with live_app(web_settings(tmp_path, artifact_delivery="proxy"), nats=False) as base:
        monkeypatch.setenv("WEB_URL", base)
        monkeypatch.setenv("DATA_DIR", str(tmp_path))
        with stack_client() as client:
            link = client.get_json("/links/1.json")
            warc = next(a for a in link["artifacts"] if a["kind"] == "warc")
            with pytest.raises(CliError) as refused:
                b"".join(client.download(warc["url"]))
    assert "answered 50" in str(refused.value)  # past the token check (no 401); S3 is absent
