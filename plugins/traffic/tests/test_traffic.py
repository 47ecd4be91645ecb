"""The browser's own traffic as a WARC, in the real browser through the real egress proxy: a
page loading a script, a style sheet, images and a JSON API call, over HTTP and over HTTPS
(a test server whose certificate a test CA signed, trusted by the archiver through
BROWSER_EXTRA_CA_FILE; the browser trusts only the archiver's own certificates), is
captured with the navigate and traffic hooks; its browser.warc.gz, read back with warcio,
holds a request and a response record for every exchange, with WARC-IP-Address, and no
cookie or authorization value; a body past the byte cap is kept up to it, marked
WARC-Truncated. A server whose certificate does not verify is not relayed."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import trustme
from warcio.archiveiterator import ArchiveIterator

from testkit.browser import BrowserHarness, run_hooks, tls_context
from testkit.httpserver import FixtureServer, Reply

pytestmark = pytest.mark.integration
COOKIE = "cookie-secret-5d1f"
TOKEN = "token-secret-77ab"
CAP = 64 * 1024
PAGE = b"""<html><head><title>Traffic</title><link rel="stylesheet" href="/style.css">
<script src="/app.js"></script></head><body><h1>page</h1><img src="/small.png">
<img src="/big.png"><p id="out">waiting</p></body></html>"""
# the token is spelled in two parts: only the header the script sends holds it whole
APP = f"""const auth = "Bearer {TOKEN[:6]}" + "{TOKEN[6:]}";
fetch("/api/data.json", {{headers: {{"Authorization": auth}}}})
  .then(r => r.json()).then(d => {{ document.getElementById("out").textContent = d.message; }});
""".encode()
EXPECTED = {"/", "/style.css", "/app.js", "/small.png", "/big.png", "/api/data.json"}


def routes(server: FixtureServer) -> None:
    html = {"Content-Type": "text/html", "Set-Cookie": f"session={COOKIE}; Path=/"}
    server.routes["/"] = Reply(PAGE, headers=html)
    server.routes["/style.css"] = Reply(b"h1 { color: red }", headers={"Content-Type": "text/css"})
    server.routes["/app.js"] = Reply(APP, headers={"Content-Type": "text/javascript"})
    png = {"Content-Type": "image/png"}
    server.routes["/small.png"] = Reply(b"\x89PNG\r\n\x1a\n" + b"s" * 100, headers=png)
    server.routes["/big.png"] = Reply(b"\x89PNG\r\n\x1a\n" + b"b" * (3 * CAP), headers=png)
    server.routes["/api/data.json"] = Reply(
        json.dumps({"message": "from the api"}).encode(),
        headers={"Content-Type": "application/json"},
    )


def records(warc: Path) -> list[tuple[str, str, dict[str, str], str, bytes]]:
    """(type, target URI, WARC headers, HTTP head as text, payload) of every record."""
    out = []
    with warc.open("rb") as f:
        for rec in ArchiveIterator(f):
            if rec.rec_type not in ("request", "response"):
                continue
            head = rec.http_headers.to_str() if rec.http_headers else ""
            out.append(
                (
                    rec.rec_type,
                    rec.rec_headers.get_header("WARC-Target-URI"),
                    dict(rec.rec_headers.headers),
                    head,
                    rec.content_stream().read(),
                )
            )
    return out


@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_every_exchange_is_recorded_without_secrets(
    https_browser: BrowserHarness, test_ca: trustme.CA, tmp_path: Path, scheme: str
) -> None:
    with FixtureServer("127.0.0.7", tls=tls_context(test_ca, "127.0.0.7") if scheme == "https"
                       else None) as site:  # fmt: skip
        routes(site)
        seen = await run_hooks(
            https_browser, f"{site.base}/", tmp_path, ["navigate", "dom", "traffic"],
            page={"max_response_bytes": CAP}, NAVIGATE_SETTLE_MS="2000",
        )  # fmt: skip
    nav, traffic = seen.final["navigate"], seen.final["traffic"]
    assert (nav.status, nav.error_code) == ("succeeded", None), nav.output_str
    assert traffic.status == "succeeded", traffic.output_str
    warc = tmp_path / "traffic" / "browser.warc.gz"
    recs = records(warc)
    base = site.base
    responses = {uri.removeprefix(base): (w, head, body) for kind, uri, w, head, body in recs
                 if kind == "response"}  # fmt: skip
    requests = {uri.removeprefix(base): (w, head) for kind, uri, w, head, _ in recs
                if kind == "request"}  # fmt: skip
    assert responses.keys() >= EXPECTED, sorted(responses)
    assert responses.keys() == requests.keys()
    for path, (w, _, _) in responses.items():
        assert w["WARC-IP-Address"] == "127.0.0.7", path
        assert requests[path][0]["WARC-Concurrent-To"] == w["WARC-Record-ID"], path
    assert json.loads(responses["/api/data.json"][2]) == {"message": "from the api"}
    assert responses["/app.js"][2] == APP
    # the page saw its API's answer: the browser got what the WARC holds
    assert "from the api" in (tmp_path / "dom" / "dom.html").read_text()
    # cut at the cap: kept up to it, marked truncated
    big_w, _, big_body = responses["/big.png"]
    assert big_w["WARC-Truncated"] == "length" and len(big_body) <= CAP
    assert "WARC-Truncated" not in responses["/small.png"][0]
    # redacted, never stored: the cookie the page set and the token its script sent
    raw = gzip.decompress(warc.read_bytes())
    assert COOKIE.encode() not in raw and TOKEN.encode() not in raw
    assert "Set-Cookie: REDACTED" in responses["/"][1]
    assert "Authorization: REDACTED" in requests["/api/data.json"][1]


async def test_a_certificate_that_does_not_verify_is_not_relayed(
    https_browser: BrowserHarness, tmp_path: Path
) -> None:
    stranger = trustme.CA()  # not trusted by the archiver
    with FixtureServer("127.0.0.7", tls=tls_context(stranger, "127.0.0.7")) as site:
        routes(site)
        seen = await run_hooks(https_browser, f"{site.base}/", tmp_path, ["navigate", "traffic"])
        assert site.requests == []
    nav = seen.final["navigate"]
    assert (nav.status, nav.error_code) == ("failed", "E_NAVIGATE_FAILED")
    assert "CERTIFICATE_VERIFY_FAILED" in nav.output_str, nav.output_str
    failed = json.loads((tmp_path / "navigate" / "navigate.json").read_text())["failed"]
    assert {(e["kind"], e["tunnel"]) for e in failed} == {("tls", True)}  # Chromium may retry
