"""The owner's `dla` commands on the real stack (`dla up`: NATS, S3, every service): add 20
URLs, status, a takedown gone from everywhere, bad input answered in one line."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from services.archiver import fonts
from services.supervisor.children import free_ports
from shared.s3 import ObjectStore
from shared.settings import CommonSettings
from testkit.forum import posts_rss
from testkit.httpserver import FixtureServer, Reply
from testkit.stack_env import own_engines_env
from testkit.waiting import wait_for

pytestmark = pytest.mark.integration

DLA = str(Path(sys.executable).parent / "dla")
PAGES = 20


@dataclass
class Up:
    data_dir: Path
    web: str
    proc: subprocess.Popen[bytes]
    pages: FixtureServer
    http: httpx.Client
    """One client for the test's requests to the web (`httpx.get` builds one, and its TLS
    context, each call: ~60 ms of CPU against ~3 ms, and the waits ask twice a second)."""

    def dla(self, *args: str, env: dict[str, str] | None = None, stdin: str | None = None):
        """Run `dla` the way the owner would after `make up`: only DATA_DIR set."""
        base = {k: v for k, v in os.environ.items() if not k.startswith(("WEB_", "NATS_"))}
        base["DATA_DIR"] = str(self.data_dir)
        base.update(env or {})
        return subprocess.run(
            [DLA, *args], env=base, input=stdin, capture_output=True, text=True, timeout=300
        )

    def stack(self) -> dict[str, Any]:
        info: dict[str, Any] = json.loads((self.data_dir / "run" / "stack.json").read_text())
        return info

    def db(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        path = self.data_dir / "archive.sqlite3"
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            return conn.execute(sql, args).fetchall()

    def s3_keys(self, prefix: str) -> list[str]:
        creds = dict(
            line.split("=", 1) for line in (self.data_dir / "s3-credentials").read_text().split()
        )
        settings = CommonSettings(
            s3_endpoint=self.stack()["s3_endpoint"],
            aws_access_key_id=creds["AWS_ACCESS_KEY_ID"],  # type: ignore[arg-type]
            aws_secret_access_key=creds["AWS_SECRET_ACCESS_KEY"],  # type: ignore[arg-type]
        )

        async def keys() -> list[str]:
            async with ObjectStore(settings) as store:
                return await store.list_keys(prefix)

        return asyncio.run(keys())


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("dla: ")
    return lines[0]


def serve_pages(site: FixtureServer, numbers: range) -> None:
    for i in numbers:
        body = f"<html><head><title>Page {i}</title></head><body>owl number {i}</body></html>"
        site.routes[f"/page/{i}"] = Reply(body.encode())


@pytest.fixture(scope="module")
def other_pages() -> Iterator[FixtureServer]:
    """127.0.0.4: the second half of the 20 pages. On one host, PER_DOMAIN_CONCURRENCY (1)
    has them captured one at a time; on two, both of the archiver's slots work."""
    with FixtureServer("127.0.0.4") as site:
        serve_pages(site, range(PAGES // 2, PAGES))
        yield site


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    tmp = tmp_path_factory.mktemp("owner")
    with FixtureServer("127.0.0.1") as forum, FixtureServer("127.0.0.2") as pages:
        forum.routes["/posts.rss"] = Reply(
            posts_rss(forum.base, []), headers={"Content-Type": "application/rss+xml"}
        )
        serve_pages(pages, range(PAGES // 2))
        env = {"RSS_URL": f"{forum.base}/posts.rss", "POLL_INTERVAL_SECONDS": "5"}
        with dla_up(tmp, env, pages) as running:
            yield running


@contextmanager
def dla_up(tmp: Path, settings: dict[str, str], pages: FixtureServer) -> Iterator[Up]:
    """`dla up` with these settings (data in tmp/data, captures allowed on 127.0.0.x), until
    the block ends."""
    (port,) = free_ports(1)
    env = own_engines_env()
    env.update(
        DATA_DIR=str(tmp / "data"),
        ALLOW_PRIVATE_TARGETS="true",
        ARCHIVE_MODE="all",
        WEB_PORT=str(port),
    )
    env.update(settings)
    log = (tmp / "up.log").open("wb")
    proc = subprocess.Popen([DLA, "up"], env=env, stdout=log, stderr=log, start_new_session=True)
    web = f"http://127.0.0.1:{port}"
    http = httpx.Client(timeout=5)
    try:
        wait_for(
            lambda: (
                (tmp / "data" / "run" / "stack.json").exists()
                and http.get(f"{web}/healthz", timeout=2).status_code == 200
            ),
            90,
            "dla up answering",
            interval=0.5,
            ignore=(httpx.HTTPError,),
            give_up=lambda: proc.poll() is not None,
            explain=lambda: (tmp / "up.log").read_text()[-3000:],
        )
        yield Up(tmp / "data", web, proc, pages, http)
    finally:
        http.close()
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)


def test_add_20_urls_reports_20_outcomes(up: Up, other_pages: FixtureServer) -> None:
    sites = [up.pages] * (PAGES // 2) + [other_pages] * (PAGES - PAGES // 2)
    urls = "".join(f"{site.base}/page/{i}\n" for i, site in enumerate(sites))
    result = up.dla("add", "-", "--json", "--timeout", "240", stdin=urls)
    assert "Traceback" not in result.stderr
    outcomes = json.loads(result.stdout)
    assert len(outcomes) == PAGES
    assert {o["outcome"] for o in outcomes} == {"captured"}, outcomes
    assert result.returncode == 0


def test_add_of_a_dead_page_says_why_it_failed(up: Up) -> None:
    up.pages.routes["/page/dead"] = Reply(b"gone", 404, {"Content-Type": "text/plain"})
    result = up.dla("add", f"{up.pages.base}/page/dead", "--json", "--timeout", "120")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    (added,) = json.loads(result.stdout)
    # what the link shows, not the writer's decision to queue it ("submit requested")
    assert (added["outcome"], added["detail"]) == ("failed", "failed · HTTP 404"), added


def test_a_capture_still_running_when_the_wait_ends_stays_pending(up: Up) -> None:
    answer = threading.Event()

    def slow(_: object) -> Reply:
        answer.wait(60)  # until the wait below has ended
        return Reply(b"<html><body><p>at last</p></body></html>")

    up.pages.routes["/page/slow"] = slow
    try:
        result = up.dla("add", f"{up.pages.base}/page/slow", "--json", "--timeout", "2")
    finally:
        answer.set()
    assert result.returncode == 1 and "Traceback" not in result.stderr
    (added,) = json.loads(result.stdout)
    assert added["outcome"] == "pending", added  # not "failed": it is still being captured
    assert added["detail"] == "not done after 2 s: still being captured"


def test_status_shows_the_running_stack(up: Up) -> None:
    result = up.dla("status", "--json")
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    assert set(status["services"].values()) == {"up"}
    assert "COMMANDS/writer-commands" in status["backlog"]
    assert "failures_last_hour" in status and "oldest_pending" in status
    assert "jobs" in status and status["domains_backing_off"] == []
    assert set(status["liveness"]) == {"watched", "due", "running", "checked_last_day",
                                       "verdicts"}  # fmt: skip
    # what the archiver's browser cannot draw, as fontconfig on this machine says
    no_font = fonts.missing_scripts()
    assert status["fonts_missing"] == (None if no_font is None else [s.name for s in no_font])


def test_check_asks_the_original_now_and_shows_the_evidence(up: Up) -> None:
    url = f"{up.pages.base}/page/checked"
    up.pages.routes["/page/checked"] = Reply(b"<html><body>a page to check</body></html>")
    added = up.dla("add", url, "--json", "--timeout", "120")
    assert added.returncode == 0, added.stdout + added.stderr
    link_id = json.loads(added.stdout)[0]["link_id"]

    present = up.dla("check", url)
    assert present.returncode == 0, present.stderr
    assert f"link {link_id}: present (online, via http)" in present.stdout

    up.pages.routes["/page/checked"] = Reply(b"gone", 404, {"Content-Type": "text/plain"})
    gone = up.dla("check", str(link_id), "--json")
    assert gone.returncode == 0, gone.stderr
    status = json.loads(gone.stdout)
    newest = status["observations"][0]
    assert (newest["answer"], newest["status"], newest["via"]) == ("gone", 404, "http")
    assert status["state"] == "unknown", "a bare 404 waits LIVENESS_CONFIRM_SECONDS"
    assert status["reason"] == "HTTP 404: not yet confirmed"

    status_now = json.loads(up.dla("status", "--json").stdout)["liveness"]
    assert status_now["watched"] >= 1 and status_now["checked_last_day"].get("gone", 0) >= 1
    assert "liveness checks:" in up.dla("status").stdout

    unknown = up.dla("check", "https://never.example/archived")
    assert unknown.returncode == 5
    assert "no link" in one_line_error(unknown)


def test_takedown_removes_a_link_from_everything(up: Up, tmp_path: Path) -> None:
    url = f"{up.pages.base}/page/takedown"
    up.pages.routes["/page/takedown"] = Reply(
        b"<html><head><title>Regrettable</title></head><body>regrettable words</body></html>"
    )
    added = up.dla("add", url, "--json", "--timeout", "120")
    assert added.returncode == 0, added.stdout + added.stderr
    link_id = json.loads(added.stdout)[0]["link_id"]
    prefix = f"archives/{link_id}/"
    assert up.s3_keys(prefix), "captured objects are in S3"
    listed = json.loads(up.dla("ls", "--json", "--limit", "1000").stdout)["links"]
    assert link_id in [link["id"] for link in listed]
    artifact = next(link for link in listed if link["id"] == link_id)["artifacts"][0]["url"]

    result = up.dla("takedown", str(link_id), "--reason", "asked by the author")
    assert result.returncode == 0, result.stderr

    wait_for(
        lambda: up.db("SELECT 1 FROM admin_audit WHERE action = 'takedown'"),
        60,
        "the takedown applied",
        interval=0.5,
    )
    audit = up.db("SELECT target, reason, admin, outcome FROM admin_audit")
    assert audit == [(f"link {link_id}", "asked by the author", "owner", "done")]
    # hidden at once; its objects are kept until TAKEDOWN_UNDO_DAYS have passed (the purge
    # and the objects' removal: tests/writer/test_moderation.py, tests/writer/test_backup.py)
    assert up.s3_keys(prefix)
    listed = json.loads(up.dla("ls", "--json", "--limit", "1000").stdout)["links"]
    assert link_id not in [link["id"] for link in listed]
    home = httpx.get(f"{up.web}/", timeout=5)
    assert home.status_code == 200
    assert "Regrettable" not in home.text and "/page/takedown" not in home.text
    assert httpx.get(f"{up.web}{artifact}", timeout=5).status_code == 404
    # every route of the web that could show the link answers, and none shows it
    assert httpx.get(f"{up.web}/links/{link_id}.json", timeout=5).status_code == 404
    assert httpx.get(f"{up.web}/links/{link_id}", timeout=5).status_code == 404
    search = httpx.get(f"{up.web}/search.json", params={"q": "regrettable"}, timeout=5)
    assert search.status_code == 200 and search.json()["results"] == []
    export = httpx.get(f"{up.web}/export/links.jsonl", timeout=10)
    assert export.status_code == 200 and url not in export.text
    feed = httpx.get(f"{up.web}/feed.xml", timeout=5)
    assert feed.status_code == 200 and "/page/takedown" not in feed.text
    # the publishable database
    out = tmp_path / "public.sqlite3.gz"
    result = up.dla("backup", "--output", str(out))
    assert result.returncode == 0, result.stderr
    raw = tmp_path / "public.sqlite3"
    raw.write_bytes(gzip.decompress(out.read_bytes()))
    # no trace of the URL or its page, only the tombstones a restore refuses it by
    assert b"/page/takedown" not in raw.read_bytes()
    assert b"regrettable" not in raw.read_bytes().lower()
    with sqlite3.connect(raw) as conn:
        assert (
            conn.execute("SELECT count(*) FROM links WHERE id = ?", (link_id,)).fetchone()[0] == 0
        )
        assert conn.execute("SELECT count(*) FROM admin_audit").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM links").fetchone()[0] >= 1
        assert conn.execute("SELECT count(*) FROM takedown_tombstones").fetchone()[0] >= 1
    # and never captured again
    again = up.dla("add", url, "--json", "--timeout", "60")
    assert again.returncode == 1
    assert json.loads(again.stdout)[0]["outcome"] == "failed"
    # within the window, an undo shows it again as it was, files included
    result = up.dla("undo", str(link_id), "--reason", "the author changed their mind")
    assert result.returncode == 0, result.stderr
    wait_for(
        lambda: up.http.get(f"{up.web}/links/{link_id}.json").status_code == 200,
        60,
        "the undo applied",
        interval=0.5,
    )
    assert httpx.get(f"{up.web}{artifact}", timeout=5).status_code in (200, 302, 307)
    exported = up.dla("audit", "--export", "jsonl")
    assert exported.returncode == 0, exported.stderr
    actions = [json.loads(line)["action"] for line in exported.stdout.splitlines()]
    assert actions[:1] == ["takedown"] and "undo" in actions
    again = up.dla("undo", str(link_id))
    assert again.returncode == 7 and "is not taken down" in one_line_error(again)


def test_bad_input_gets_one_line_and_an_exit_code(up: Up, tmp_path: Path) -> None:
    result = up.dla("show", "abc")
    assert result.returncode == 2
    one_line_error(result)
    result = up.dla("takedown", "999999", "--reason", "x")
    assert result.returncode == 5 and "no link 999999" in one_line_error(result)
    result = up.dla("rearchive", "999999")
    assert result.returncode == 5
    one_line_error(result)
    result = up.dla("takedown", "1", "--reason", "x", env={"ADMIN_TOKEN": "not-the-token"})
    assert result.returncode == 6 and "admin token" in one_line_error(result)
    result = up.dla("exclude", "not a domain")
    assert result.returncode == 7
    one_line_error(result)
    result = up.dla("add", "http://[bad", "notaurl")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    result = up.dla("restore", str(tmp_path / "nothing.gz"))
    assert result.returncode == 5
    (tmp_path / "b.gz").write_bytes(b"x")
    result = up.dla("restore", str(tmp_path / "b.gz"))
    assert result.returncode == 3 and "stop the archive first" in one_line_error(result)
    # the stack not running: another data directory, nothing listening
    (dead,) = free_ports(1)
    env = {"DATA_DIR": str(tmp_path / "none"), "WEB_PORT": str(dead)}
    for args in (
        ["ls"],
        ["status"],
        ["add", "https://example.org/"],
        ["takedown", "1", "--reason", "x"],
    ):
        result = up.dla(*args, env=env)
        assert result.returncode == 4, (args, result.stderr)
        assert "not reachable" in one_line_error(result) or "not running" in result.stderr


def test_an_exclusion_is_lifted_with_dla_include(up: Up) -> None:
    result = up.dla("include", "never-excluded.example")
    assert result.returncode == 7 and "not excluded by an admin" in one_line_error(result)
    excluded = "SELECT domain FROM excluded_domains WHERE domain = 'lift.example'"
    result = up.dla("exclude", "lift.example", "--reason", "spam")
    assert result.returncode == 0, result.stderr
    wait_for(lambda: up.db(excluded), 60, "the exclusion applied", interval=0.5)
    result = up.dla("include", "lift.example", "--reason", "not spam after all")
    assert result.returncode == 0, result.stderr
    assert "lift of the exclusion of lift.example sent" in result.stdout
    wait_for(lambda: not up.db(excluded), 60, "the exclusion lifted", interval=0.5)
    audit = "SELECT action, reason, outcome FROM admin_audit WHERE target = 'lift.example'"
    assert up.db(audit + " ORDER BY id") == [
        ("exclude", "spam", "done"),
        ("include", "not spam after all", "done"),
    ]
