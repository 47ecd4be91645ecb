"""The site's cookies reach a platform step's own requests of that site (shared.platforms.http
Client, through shared.fetching): each request of the site's host, never a host a redirect
leads to, and never the WARC."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared import cookies
from shared.fetching.exchange import FetchLimits
from shared.platforms.http import Client, warc_log
from testkit.httpserver import FixtureServer, Reply

pytestmark = pytest.mark.integration
SECRET = "platform-session-3d7f9a1c"


@pytest.fixture
def sites() -> Iterator[tuple[FixtureServer, FixtureServer]]:
    with FixtureServer("127.0.0.2") as site, FixtureServer("127.0.0.3") as other:
        site.routes["/api/post.json"] = Reply(
            b'{"ok": true}', headers={"Content-Type": "application/json"}
        )
        site.routes["/hop"] = Reply(b"", 302, {"Location": f"{other.base}/elsewhere"})
        other.routes["/elsewhere"] = Reply(b"{}", headers={"Content-Type": "application/json"})
        yield site, other


async def test_the_sites_cookies_go_to_its_requests_alone(
    sites: tuple[FixtureServer, FixtureServer], tmp_path: Path
) -> None:
    site, other = sites
    folder = tmp_path / "cookies"
    folder.mkdir()
    (folder / f"{site.host}.txt").write_text(
        f"# Netscape HTTP Cookie File\n{site.host}\tFALSE\t/\tFALSE\t0\tsession\t{SECRET}\n"
    )
    jar = cookies.load(folder, f"{site.base}/p/1")
    warc = tmp_path / "step.warc.gz"
    with (
        warc_log(warc, "test") as log,
        Client(
            FetchLimits(total_timeout=10), user_agent="t", allow_private=True, warc=log, cookies=jar
        ) as client,
    ):
        assert (await client.get(f"{site.base}/api/post.json")).status == 200
        assert (await client.get(f"{site.base}/hop")).status == 200
    sent = {p: h.get("Cookie") for p, h in site.requests}
    assert sent["/api/post.json"] == f"session={SECRET}" and sent["/hop"] == f"session={SECRET}"
    assert [h.get("Cookie") for _, h in other.requests] == [None]  # not the other host
    assert SECRET.encode() not in gzip.decompress(warc.read_bytes())
