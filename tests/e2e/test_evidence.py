"""Evidence end to end: a page with scripts, styles, an image and a JSON API call is
captured by the whole stack with a local RFC 3161 authority that answers 500, hangs, answers
garbage and then recovers: the link is archived meanwhile with its timestamp pending, then
granted; the WACZ passes `wacz validate`, `dla verify` passes and catches one changed byte,
and (once the browser's own traffic is kept as WARC) pywb replays the page with the API's
data and no cookie value is in any WARC. Then OpenSSL's own authority with its chain in its
`certs` file, failing its first two requests, beside one whose tokens do not verify: every
object read before and after the late token has the sha256 the archive records, the WACZ
does not change, `dla verify` passes on both downloads, and the invalid one is said in words
and not asked again."""

from __future__ import annotations

import hashlib
import json
import shutil
import socket
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from services.supervisor.children import free_ports
from services.supervisor.cli.app import main as dla
from services.supervisor.stack import Stack
from testkit.httpserver import FixtureServer, Reply
from testkit.stack_env import ENGINES_GRACE_S, own_engines_env
from testkit.tsa import LocalTSA
from testkit.waiting import wait_for
from tests.e2e.conftest import Forum, Running, running_on

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
BROWSER_WARC = (REPO / "plugins" / "traffic").is_dir()
COOKIE = "sessionvalue-9f2c41"
PAGE = b"""<!doctype html><html><head><title>Evidence page</title>
<link rel="stylesheet" href="/style.css"><script src="/app.js"></script></head>
<body><h1>Evidence page</h1><img src="/dot.gif" alt="dot"><p id="out">loading</p></body></html>"""
SCRIPT = b"""fetch('/api/data.json').then(r => r.json()).then(d => {
  document.getElementById('out').textContent = 'API says ' + d.answer; });"""
GIF = bytes.fromhex(
    "47494638396101000100800000ffffff00000021f90401000000002c00000000010001000002024401003b"
)


def serve_page(web: FixtureServer) -> None:
    web.routes["/page.html"] = Reply(PAGE, headers={
        "Content-Type": "text/html", "Set-Cookie": f"session={COOKIE}; Path=/"})  # fmt: skip
    web.routes["/style.css"] = Reply(b"h1 { color: teal }", headers={"Content-Type": "text/css"})
    web.routes["/app.js"] = Reply(SCRIPT, headers={"Content-Type": "application/javascript"})
    web.routes["/dot.gif"] = Reply(GIF, headers={"Content-Type": "image/gif"})
    web.routes["/api/data.json"] = Reply(
        b'{"answer": "forty-two-from-the-api"}', headers={"Content-Type": "application/json"}
    )


@pytest.fixture
def authority(tmp_path: Path) -> Iterator[LocalTSA]:
    with LocalTSA(tmp_path / "tsa") as tsa:
        tsa.set_mode("error")
        yield tsa


@contextmanager
def stack_stamped_by(
    data: Path, forum: Forum, authorities: list[LocalTSA], ca_file: Path
) -> Iterator[Running]:
    """The whole stack, its captures timestamped by `authorities`, trusting `ca_file`."""
    (web_port,) = free_ports(1)
    env = own_engines_env()
    env.update(
        RSS_URL=forum.rss_url, POLL_INTERVAL_SECONDS="0.5", ALLOW_PRIVATE_TARGETS="true",
        ARCHIVE_MODE="all", WEB_PORT=str(web_port), JOB_RETRY_DELAY_SECONDS="1",
        TSA_URLS=",".join(a.url for a in authorities), TSA_CA_FILE=str(ca_file),
        TSA_TIMEOUT_SECONDS="1", TSA_RETRY_SECONDS="0.2", LOG_LEVEL="INFO",
    )  # fmt: skip
    st = Stack(data_dir=data, env=env)
    try:
        st.start_engines()
        st.start_services()
        with running_on(st, f"http://127.0.0.1:{web_port}") as running:
            yield running
    finally:
        st.stop(engines_grace_s=ENGINES_GRACE_S)


@pytest.fixture
def stamped_stack(tmp_path: Path, forum: Forum, authority: LocalTSA) -> Iterator[Running]:
    with stack_stamped_by(tmp_path / "data", forum, [authority], authority.ca.root_pem) as st:
        yield st


def evidence_of(running: Running, link_id: int) -> dict[str, Any]:
    data: dict[str, Any] = running.http.get(f"{running.web}/links/{link_id}.json").json()
    return data


def stamp(running: Running, link_id: int) -> dict[str, Any] | None:
    ev = evidence_of(running, link_id).get("evidence")
    return ev["timestamps"][0] if ev and ev["timestamps"] else None


def test_capture_evidence_with_a_failing_then_recovering_authority(
    forum: Forum, outside_web: FixtureServer, stamped_stack: Running, authority: LocalTSA,
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    running = stamped_stack
    serve_page(outside_web)
    forum.add(301, f'<p>See <a href="{outside_web.base}/page.html">the page</a>.</p>')
    link = running.wait_for(lambda: running.archived("/page.html"), 120, "the link archived")
    link_id = link["id"]

    # the authority is down: the capture is archived, its timestamp pending
    first = running.wait_for(
        lambda: (s := stamp(running, link_id)) and s["last_error"] and s, 60, "a failed round"
    )
    assert first["status"] == "pending" and "HTTP 500" in first["last_error"]
    detail = evidence_of(running, link_id)
    assert detail["status"] == "archived"
    assert detail["fingerprint"] and len(detail["fingerprint"]) == 64
    page = running.http.get(f"{running.web}/links/{link_id}").text
    assert "timestamp pending" in page and detail["fingerprint"] in page

    for mode, error in (("hang", "no answer within"), ("garbage", "not a timestamp reply")):
        authority.set_mode(mode)
        running.wait_for(
            lambda: failed_with(stamp(running, link_id), error),  # noqa: B023 (waited on at once)
            60,
            f"a round against an authority in mode {mode}",
        )
        assert evidence_of(running, link_id)["status"] == "archived"

    authority.set_mode("ok")
    granted = running.wait_for(
        lambda: (s := stamp(running, link_id)) and s["status"] == "granted" and s, 90, "granted"
    )
    assert granted["time"] and granted["token_url"] and granted["chain_url"]
    ev = evidence_of(running, link_id)["evidence"]
    assert ev["verification"]["verdict"] == "verified", ev["verification"]
    assert "timestamp pending" not in running.http.get(f"{running.web}/links/{link_id}").text

    # the WACZ passes wacz validate; the token is a file of its own, the WACZ as it was built
    wacz = tmp_path / "capture.wacz"
    wacz.write_bytes(
        running.http.get(f"{running.web}{ev['wacz_url']}", follow_redirects=True).content
    )
    validate = subprocess.run(
        [str(Path(sys.executable).parent / "wacz"), "validate", "-f", str(wacz)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert validate.returncode == 0 and "is valid" in validate.stdout, validate.stdout
    assert '"timestamps"' not in zipfile.ZipFile(wacz).read("datapackage-digest.json").decode()

    # dla verify: the link, the WACZ; one changed byte fails it
    monkeypatch.setenv("WEB_URL", running.web)
    monkeypatch.setenv("TSA_CA_FILE", str(authority.ca.root_pem))
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "nowhere"))
    assert dla(["verify", str(link_id)]) == 0, capsys.readouterr().out
    assert dla(["verify", str(wacz)]) == 0, capsys.readouterr().out
    with zipfile.ZipFile(wacz) as z:
        warc_name = next(n for n in z.namelist() if n.startswith("archive/"))
    forged = tmp_path / "forged.wacz"
    shutil.copy(wacz, forged)
    flip_member_byte(forged, warc_name)
    assert dla(["verify", str(forged)]) == 1
    assert "MISMATCH" in capsys.readouterr().out
    other = LocalTSA(tmp_path / "other-ca")  # the wrong CA: the token no longer verifies
    monkeypatch.setenv("TSA_CA_FILE", str(other.ca.root_pem))
    assert dla(["verify", str(link_id)]) == 1

    if BROWSER_WARC:
        warcs = [a for a in evidence_of(running, link_id)["artifacts"] if a["kind"] == "warc"]
        for a in warcs:
            body = running.http.get(f"{running.web}{a['url']}", follow_redirects=True).content
            assert COOKIE.encode() not in body, f"cookie value in {a['plugin']}'s WARC"
        assert COOKIE.encode() not in wacz.read_bytes()
        replay_with_pywb(wacz, tmp_path, f"{outside_web.base}/page.html")


def test_a_late_token_changes_no_stored_object(
    forum: Forum, outside_web: FixtureServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    with (
        LocalTSA(tmp_path / "openssl-tsa", chain="reply") as good,
        LocalTSA(tmp_path / "untrusted-tsa", "Untrusted TSA") as untrusted,
        stack_stamped_by(tmp_path / "data", forum, [good, untrusted], good.ca.trust_pem) as running,
    ):
        good.set_mode("error")
        serve_page(outside_web)
        forum.add(302, f'<p>See <a href="{outside_web.base}/page.html">the page</a>.</p>')
        link = running.wait_for(lambda: running.archived("/page.html"), 120, "the link archived")
        link_id = link["id"]
        by = running.wait_for(
            lambda: good.asked >= 2 and (b := stamps_by_authority(running, link_id))
            and b[good.url]["last_error"] and b[untrusted.url]["status"] != "pending" and b,
            60, "two requests refused, the untrusted token judged",
        )  # fmt: skip
        assert by[good.url]["status"] == "pending" and "HTTP 500" in by[good.url]["last_error"]
        invalid = by[untrusted.url]
        assert invalid["status"] == "invalid" and invalid["next_try_at"] is None
        assert "does not chain to a trusted root" in invalid["last_error"]
        page = running.http.get(f"{running.web}/links/{link_id}").text
        assert "timestamp invalid" in page and "not asked again" in page
        # (at load 8 a request whose answer came after its deadline is asked again: what
        # must not happen is a request after the verdict)
        judged = untrusted.asked
        before = stored_objects(running, link_id)  # each checked against its recorded sha256
        ev = evidence_of(running, link_id)["evidence"]
        early = tmp_path / "early" / "capture.wacz"
        early.parent.mkdir()
        early.write_bytes(before[ev["wacz_url"]])

        good.set_mode("ok")
        running.wait_for(
            lambda: stamps_by_authority(running, link_id)[good.url]["status"] == "granted",
            90, "the late token granted",
        )  # fmt: skip
        after = stored_objects(running, link_id)
        assert {u: after[u] for u in before} == before  # nothing stored before has changed
        late = evidence_of(running, link_id)["evidence"]
        assert late["wacz_url"] == ev["wacz_url"]
        (granted,) = [t for t in late["timestamps"] if t["status"] == "granted"]
        assert granted["token_url"] in set(after) - set(before)
        assert after[granted["token_url"]] in good.replies  # the authority's bytes as sent
        latest = tmp_path / "latest" / "capture.wacz"
        latest.parent.mkdir()
        latest.write_bytes(after[late["wacz_url"]])

        monkeypatch.setenv("WEB_URL", running.web)
        monkeypatch.setenv("TSA_CA_FILE", str(good.ca.trust_pem))
        monkeypatch.setenv("DATA_DIR", str(tmp_path / "nowhere"))
        for wacz in (early, latest):
            assert dla(["verify", str(wacz), "--json"]) == 0, capsys.readouterr().out
            found = {f["what"]: f for f in json.loads(capsys.readouterr().out)["findings"]}
            assert found[f"timestamp {good.url}"]["ok"]  # the archive's token, over its manifest
        assert dla(["verify", str(link_id), "--json"]) == 0
        found = {f["what"]: f for f in json.loads(capsys.readouterr().out)["findings"]}
        said = found[f"timestamp {untrusted.url}"]["detail"]
        assert said.startswith("invalid, not asked again:") and "does not chain" in said
        assert untrusted.asked == judged


def stamps_by_authority(running: Running, link_id: int) -> dict[str, dict[str, Any]]:
    ev = evidence_of(running, link_id).get("evidence") or {}
    return {t["authority"]: t for t in ev.get("timestamps", [])}


def stored_objects(running: Running, link_id: int) -> dict[str, bytes]:
    """Every file of the link as stored (URL -> bytes), each with the sha256 recorded."""
    found = {}
    for a in evidence_of(running, link_id)["artifacts"]:
        body = running.http.get(
            f"{running.web}{a['url']}", follow_redirects=True, timeout=30
        ).content
        assert hashlib.sha256(body).hexdigest() == a["sha256"], a
        found[a["url"]] = body
    return found


def failed_with(stamp_: dict[str, Any] | None, error: str) -> bool:
    return bool(stamp_) and error in ((stamp_ or {}).get("last_error") or "")


def flip_member_byte(path: Path, member: str) -> None:
    """Change one byte in the middle of a stored zip member."""
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(member)
    with path.open("r+b") as f:
        f.seek(info.header_offset + 26)
        name_len = int.from_bytes(f.read(2), "little")
        extra_len = int.from_bytes(f.read(2), "little")
        pos = info.header_offset + 30 + name_len + extra_len + info.compress_size // 2
        f.seek(pos)
        byte = f.read(1)
        f.seek(pos)
        f.write(bytes([byte[0] ^ 0x01]))


def replay_with_pywb(wacz: Path, tmp_path: Path, url: str) -> None:
    """pywb serves the page from the WACZ; real Chromium shows the API's data."""
    from playwright.sync_api import sync_playwright

    bin_dir = Path(sys.executable).parent
    root = tmp_path / "pywb"
    root.mkdir()
    subprocess.run([str(bin_dir / "wb-manager"), "init", "c"], cwd=root, check=True, timeout=60)
    add = [str(bin_dir / "wb-manager"), "add", "--unpack-wacz", "c", str(wacz)]
    subprocess.run(add, cwd=root, check=True, timeout=120)
    (root / "config.yaml").write_text("framed_replay: false\n")  # the page, not a banner frame
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [str(bin_dir / "wayback"), "-p", str(port), "-b", "127.0.0.1"]
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with httpx.Client(timeout=2) as http:  # one client: httpx.get builds one a call
            wait_for(lambda: _answers(http, port), 60, "pywb answering", interval=0.25)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                        args=["--no-sandbox", "--disable-gpu"])  # fmt: skip
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}/c/{url}", wait_until="load", timeout=60_000)
            page.wait_for_function(
                "() => document.body && document.body.innerText.includes('forty-two-from-the-api')",
                timeout=30_000,
            )
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _answers(http: httpx.Client, port: int) -> bool:
    try:
        return http.get(f"http://127.0.0.1:{port}/").status_code < 500
    except httpx.HTTPError:
        return False
