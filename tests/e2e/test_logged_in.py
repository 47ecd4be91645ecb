"""A logged-in capture end to end: the whole stack archives a page with the operator's
cookie for its site (COOKIES_DIR); the page prints the account's e-mail and a CSRF token in
its HTML and gets both again from an API its script calls, and shows a video the site serves
only with the login. No public route serves an object holding the e-mail or the token
(every artifact, gunzipped and unzipped, the link's page and JSON, search, the export); with
the admin token the browser's WARC is there and holds them; the public link page shows the
lock; the media job downloads the video with the site's cookie."""

from __future__ import annotations

import gzip
import io
import zipfile
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import pytest

from testkit.httpserver import FixtureServer, Reply
from testkit.mediaserver import make_clip
from tests.e2e.conftest import Forum, Running

pytestmark = pytest.mark.integration
SESSION = "sess-7c1d9e2b4a6f"
EMAIL = "ada.member.4417@example.org"
CSRF = "csrf-b83f0e51c9d27a64"
TOKEN = "e2e-admin-sesame"
ARTICLE = "<p>The harbour club met on Tuesday and agreed to repaint the boathouse.</p>" * 20


def page(handler: BaseHTTPRequestHandler) -> Reply:
    """The members' page: logged in (the session cookie sent), it shows the account."""
    logged_in = f"session={SESSION}" in (handler.headers.get("Cookie") or "")
    account = (
        f'<meta name="csrf-token" content="{CSRF}">' if logged_in else "",
        f"<header><nav>Signed in as {EMAIL}</nav></header>" if logged_in else "",
    )
    body = (
        f"<!doctype html><html><head><title>Harbour club</title>{account[0]}</head><body>"
        f"{account[1]}<article><h1>Club news</h1>{ARTICLE}</article><p id='me'></p>"
        "<video src='/members/clip.mp4' controls></video>"
        "<script>fetch('/api/me').then(r => r.json()).then(d => {"
        "document.getElementById('me').dataset.seen = d.ok; });</script></body></html>"
    )
    return Reply(body.encode(), headers={"Content-Type": "text/html; charset=utf-8"})


def me(handler: BaseHTTPRequestHandler) -> Reply:
    logged_in = f"session={SESSION}" in (handler.headers.get("Cookie") or "")
    answer = f'{{"ok": true, "email": "{EMAIL}", "csrf": "{CSRF}"}}' if logged_in else "{}"
    return Reply(answer.encode(), headers={"Content-Type": "application/json"})


def members_only(clip: bytes) -> Callable[[BaseHTTPRequestHandler], Reply]:
    def reply(handler: BaseHTTPRequestHandler) -> Reply:
        if f"session={SESSION}" not in (handler.headers.get("Cookie") or ""):
            return Reply(b"log in first", 403, {"Content-Type": "text/plain"})
        return Reply(clip, headers={"Content-Type": "video/mp4"})

    return reply


@pytest.fixture
def cookies_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "cookies"
    folder.mkdir()
    (folder / "127.0.0.2.txt").write_text(
        f"# Netscape HTTP Cookie File\n127.0.0.2\tFALSE\t/\tFALSE\t0\tsession\t{SESSION}\n"
    )
    return folder


@pytest.fixture
def extra_env(cookies_dir: Path) -> dict[str, str]:
    return {"COOKIES_DIR": str(cookies_dir), "ADMIN_TOKEN": TOKEN, "ARTIFACT_DELIVERY": "proxy"}


def plain(data: bytes) -> bytes:
    """The bytes as a reader would find them: gzip members unpacked, a zip's files too."""
    if data[:2] == b"\x1f\x8b":
        return plain(gzip.decompress(data))
    if data[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            return b"\n".join(plain(z.read(name)) for name in z.namelist())
    return data


def holds_the_account(data: bytes) -> bool:
    found = plain(data)
    return EMAIL.encode() in found or CSRF.encode() in found


def test_a_logged_in_capture_keeps_the_account_private(
    forum: Forum, outside_web: FixtureServer, running: Running, tmp_path: Path
) -> None:
    outside_web.routes["/members"] = page
    outside_web.routes["/api/me"] = me
    outside_web.routes["/members/clip.mp4"] = members_only(
        make_clip(tmp_path / "clip.mp4").read_bytes()
    )
    forum.add(301, f'<p><a href="{outside_web.base}/members">club news</a></p>')

    def captured() -> dict[str, Any] | None:
        link = running.archived("/members")
        if link is None:
            return None
        kinds = {a["kind"] for a in link["artifacts"]}
        return link if {"warc", "dom", "wacz", "screenshot"} <= kinds else None

    link = running.wait_for(captured, 180, "the members' page captured with its WACZ")

    def downloaded() -> list[tuple[Any, ...]]:
        return running.query(
            "SELECT m.status FROM media_items m JOIN link_media lm ON lm.media_id = m.id"
            " WHERE lm.link_id = ? AND m.status = 'downloaded'",
            link["id"],
        )

    running.wait_for(downloaded, 180, "the members' video downloaded with the cookie")
    assert any(f"session={SESSION}" in (h.get("Cookie") or "") for _, h in outside_web.requests)
    web = running.web
    detail = httpx.get(f"{web}/links/{link['id']}.json", timeout=10).json()
    private = {a["kind"] for a in detail["artifacts"] if a["private"]}
    assert {"warc", "dom", "wacz", "raw_response"} <= private
    for a in detail["artifacts"]:
        got = httpx.get(web + a["url"], timeout=30)
        if a["private"]:
            assert got.status_code == 401, a
        else:
            assert got.status_code == 200, a
            assert not holds_the_account(got.content), a
    for route in (f"/links/{link['id']}", f"/links/{link['id']}.json", "/index.json",
                  "/export/links.jsonl", f"/search.json?q={EMAIL.split('@')[0]}"):  # fmt: skip
        got = httpx.get(web + route, timeout=10)
        assert got.status_code == 200 and not holds_the_account(got.content), route
    assert "🔒 private" in httpx.get(f"{web}/links/{link['id']}", timeout=10).text
    # the admin gets the browser's traffic, with the API's answer in it
    traffic = next(a for a in detail["artifacts"] if a["plugin"] == "traffic")
    admin = {"authorization": f"Bearer {TOKEN}"}
    warc = httpx.get(web + traffic["url"], headers=admin, timeout=30)
    assert warc.status_code == 200 and holds_the_account(warc.content)
    assert SESSION.encode() not in plain(warc.content)
