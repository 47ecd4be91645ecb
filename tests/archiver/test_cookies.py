"""The operator's cookies (COOKIES_DIR) in a real archiver browser: the link's site gets them
and no other site does; a login wall met with them is E_NAVIGATE_LOGGED_OUT; and the cookie
value is in no artifact, WARC, log line or database row of the run."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from services.writer.db import open_db
from shared.hooks.records import ArtifactRecord
from testkit.browser import BrowserHarness, run_hooks
from testkit.httpserver import FixtureServer, Reply
from testkit.platform_pages import LOGIN_PAGE
from testkit.writer_harness import Harness, done, dump, event, occ, post

pytestmark = pytest.mark.integration
SECRET = "s3cr3t-session-9f8e7d6c5b4a"
REFRESHED = "refreshed-session-0a1b2c3d4e"
"""What the site answers a logged-in request with: the session, renewed."""
OTHER = "other-site-secret-1a2b3c4d"
SECRETS = (SECRET, REFRESHED, OTHER)
HTML = {"Content-Type": "text/html; charset=utf-8"}
CAPTURES = ["navigate", "screenshot", "pdf", "dom", "fetch", "metadata", "readable"]


@pytest.fixture
def sites() -> Iterator[tuple[FixtureServer, FixtureServer]]:
    """The link's site on 127.0.0.2 (its page loads an image from 127.0.0.3) and the other."""
    with FixtureServer("127.0.0.2") as site, FixtureServer("127.0.0.3") as other:
        other.routes["/pixel.png"] = Reply(b"GIF89a", headers={"Content-Type": "image/gif"})
        page = (
            "<html><head><title>A members' page</title></head><body><article><h1>Members</h1>"
            + "<p>Notes for the members of the harbour club, kept here for everyone.</p>" * 30
            + f'<img src="{other.base}/pixel.png" alt="pixel"></article></body></html>'
        )

        def answer(body: str) -> Callable[[BaseHTTPRequestHandler], Reply]:
            def reply(handler: BaseHTTPRequestHandler) -> Reply:
                logged_in = SECRET in (handler.headers.get("Cookie") or "")
                renew = (
                    {"Set-Cookie": f"session={REFRESHED}; Path=/; HttpOnly"} if logged_in else {}
                )
                return Reply(body.encode(), headers={**HTML, **renew})

            return reply

        site.routes["/page"] = answer(page)
        site.routes["/wall"] = answer(LOGIN_PAGE)
        yield site, other


def cookie_files(folder: Path, site: FixtureServer, other: FixtureServer) -> Path:
    folder.mkdir()
    (folder / f"{site.host}.txt").write_text(
        "# Netscape HTTP Cookie File\n"
        f"{site.host}\tFALSE\t/\tFALSE\t0\tsession\t{SECRET}\n"
        f"{other.host}\tFALSE\t/\tFALSE\t0\tleak\t{OTHER}\n"  # not this site's: ignored
    )
    return folder


def sent_cookies(server: FixtureServer, path: str) -> list[str]:
    return [h.get("Cookie", "") for p, h in server.requests if p.split("?")[0] == path]


async def test_the_sites_cookies_go_to_it_alone_and_are_written_nowhere(
    browser: BrowserHarness,
    sites: tuple[FixtureServer, FixtureServer],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    site, other = sites
    folder = cookie_files(tmp_path / "cookies", site, other)
    out = tmp_path / "out"
    caplog.set_level(logging.DEBUG)
    seen = await run_hooks(browser, f"{site.base}/page", out, CAPTURES,
                           page={"cookies_dir": str(folder)}, COOKIES_DIR=str(folder))  # fmt: skip
    assert seen.final["navigate"].status == "succeeded", seen.final["navigate"]
    assert any(f"session={SECRET}" in c for c in sent_cookies(site, "/page"))
    assert sent_cookies(other, "/pixel.png") and not any(sent_cookies(other, "/pixel.png"))
    assert not any("leak=" in c for c in sent_cookies(site, "/page"))
    nav = (out / "navigate" / "navigate.json").read_text()
    assert '"site": "127.0.0.2"' in nav and '"count": 1' in nav

    wall_out = tmp_path / "wall"
    walled = await run_hooks(browser, f"{site.base}/wall", wall_out, ["navigate"],
                             page={"cookies_dir": str(folder)})  # fmt: skip
    final = walled.final["navigate"]
    assert (final.status, final.error_code) == ("partial", "E_NAVIGATE_LOGGED_OUT")

    # every file of both runs (artifacts, WARCs, hooks' logs), every log line, every row
    files = [p for d in (out, wall_out) for p in d.rglob("*") if p.is_file()]
    assert any(p.name.endswith(".warc.gz") for p in files) and len(files) >= 8
    for path in files:
        data = path.read_bytes()
        assert not any(secret.encode() in data for secret in SECRETS), path
    assert not any(secret in caplog.text for secret in SECRETS)
    h = Harness(open_db(tmp_path / "archive.sqlite3"))
    h.apply(post("g1", occ(f"{site.base}/page")))
    (job,) = [h.job(j.job_id) for j in h.dispatch()]
    records = [*seen.records, *seen.final.values(), *walled.final.values()]
    records += [
        ArtifactRecord(plugin=p.parent.name, kind="file", path=p.name,
                       s3_key=f"archives/1/s/{p.parent.name}/{p.name}", content_type="x",
                       bytes=p.stat().st_size, sha256=hashlib.sha256(p.read_bytes()).hexdigest())
        for p in files
    ]  # fmt: skip
    h.apply(*(event(job, i, r) for i, r in enumerate(records)), done(job, records=len(records)))
    rows = repr(dump(h.conn))
    assert "127.0.0.2" in rows and not any(secret in rows for secret in SECRETS)
