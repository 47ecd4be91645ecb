"""A wall is never an archive: a link whose only capture met a login wall (no post kept)
reads "not archived: the site asked for a login" on its page, in the JSON and in `dla ls`;
its screenshot is captioned as the wall; the wall's words reach no reader view and no
search (the real readable and metadata hooks run on the wall's captures and their records
go through the writer's apply path)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from services.writer.db import open_db
from shared.hooks.records import ArchiveResultRecord, ArtifactRecord, HookRecord, parse_record
from testkit.writer_harness import Harness, done, event, occ, post
from tests.web.conftest import web_settings
from tests.web.test_browser import live_app

URL = "https://x.com/ada_example/status/1790000000000000009"
LOGIN = "https://x.com/i/flow/login"
WALL_WORD = "Quokkabridge"
"""A word only the wall shows."""
WALL = (
    f"<html><head><title>Log in to X / X</title></head><body><h1>{WALL_WORD} members</h1>"
    f"<p>Sign in to see what {WALL_WORD} members share.</p><form><input name=user>"
    "<input type=password name=pass><button>Log in</button></form></body></html>"
)
PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
LABEL = "not archived: the site asked for a login"


def run_hook(snapshot: Path, plugin: str, script: str) -> list[HookRecord]:
    """A post-processing hook as the runner runs it, on the snapshot's captures; its
    records as the runner forwards them (plugin and hook named)."""
    (snapshot / plugin).mkdir(exist_ok=True)
    proc = subprocess.run(
        [sys.executable, str(PLUGINS / plugin / script), f"--url={URL}"],
        cwd=snapshot / plugin,
        capture_output=True,
        timeout=120,
        check=True,
        env=dict(os.environ),
    )
    records = [parse_record(line) for line in proc.stdout.splitlines() if line.strip()]
    return [
        r.model_copy(update={"plugin": plugin, "hook": script})
        if isinstance(r, ArchiveResultRecord)
        else r
        for r in records
    ]


def wall_snapshot(folder: Path) -> Path:
    """What the capture hooks left of a page that was a login wall in the browser and in the
    raw fetch: navigate.json with its wall, the rendered DOM, the raw body."""
    for plugin in ("navigate", "dom", "fetch"):
        (folder / plugin).mkdir(parents=True)
    nav = {"status": 200, "final_url": LOGIN, "document": True,
           "wall": {"reason": "login_wall", "why": "login page /i/flow/login"}}  # fmt: skip
    (folder / "navigate" / "navigate.json").write_text(json.dumps(nav))
    (folder / "dom" / "dom.html").write_text(WALL)
    (folder / "fetch" / "body.html").write_text(WALL)
    (folder / "fetch" / "headers.json").write_text(json.dumps({"status": 200, "final_url": LOGIN}))
    return folder


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir whose database holds one link, its only capture a login wall (the web
    fixtures of tests/web/conftest.py serve it)."""
    data = tmp_path_factory.mktemp("walled")
    snapshot = wall_snapshot(data / "snapshot")
    h = Harness(open_db(data / "archive.sqlite3"))
    h.apply(post("g1", occ(URL)))
    (job,) = (h.job(j.job_id) for j in h.dispatch())
    key, png = "archives/1/s/screenshot/screenshot.png", "image/png"
    shot = ArtifactRecord(plugin="screenshot", kind="screenshot", path="screenshot.png",
                          s3_key=key, content_type=png, bytes=10, sha256="0" * 64)  # fmt: skip
    records: list[HookRecord] = [
        ArchiveResultRecord(
            status="failed",
            plugin="x",
            hook="on_Snapshot__15_x.py",
            error_code="E_X_LOGIN_WALL",
            output_str="login page",
        ),
        ArchiveResultRecord(
            status="partial",
            plugin="navigate",
            hook="on_Snapshot__21_navigate.py",
            error_code="E_NAVIGATE_LOGIN_WALL",
            output_str="login page",
        ),
        shot,
        ArchiveResultRecord(
            status="succeeded", plugin="screenshot", hook="on_Snapshot__51_screenshot.py"
        ),
        *run_hook(snapshot, "metadata", "on_Snapshot__81_metadata.py"),
        *run_hook(snapshot, "readable", "on_Snapshot__82_readable.py"),
    ]
    h.apply(*(event(job, i, r) for i, r in enumerate(records)), done(job, records=len(records)))
    h.conn.close()
    return data


async def test_a_wall_only_link_reads_not_archived(client: httpx.AsyncClient) -> None:
    (listed,) = (await client.get("/index.json")).json()["links"]
    assert listed["status_label"] == LABEL
    link = (await client.get("/links/1.json")).json()
    assert link["status_label"] == LABEL and link["retry_at"] is not None
    page = (await client.get("/links/1", headers={"accept": "text/html"})).text
    assert LABEL in page
    assert "Screenshot of the page as archived" not in page
    assert "Screenshot of the wall, not of the page (the site asked for a login)" in page


async def test_the_wall_s_words_are_in_no_search_and_no_reader_view(
    client: httpx.AsyncClient,
) -> None:
    found = (await client.get("/search.json", params={"q": WALL_WORD})).json()
    assert found["results"] == []
    page = (await client.get("/links/1", headers={"accept": "text/html"})).text
    assert WALL_WORD not in page and 'id="reader"' not in page
    link = (await client.get("/links/1.json")).json()
    assert WALL_WORD not in json.dumps(link)


@pytest.fixture
def served(archive: Path) -> Iterator[str]:
    with live_app(web_settings(archive), nats=False) as base:
        yield base


def test_dla_ls_says_not_archived(served: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WEB_", "NATS_"))}
    env.update(DATA_DIR=str(tmp_path), WEB_URL=served, COLUMNS="200")
    dla = str(Path(sys.executable).parent / "dla")
    shown = subprocess.run([dla, "ls"], env=env, capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert LABEL in shown.stdout
