"""The egress proxy against hosts that fail, in the real browser: a page whose scripts,
styles and images point at a name that does not resolve (`*.invalid`), a host on 127.0.0.x
that accepts and never answers (over plain HTTP and through a CONNECT tunnel) and a refused
port loads without waiting out its navigation timeout, counts those requests as failed
subresources, and logs nothing above DEBUG for the connections the capture's end cuts; the
main document's own failures map to the navigation's error codes."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.archiver.egress import EgressPolicy
from shared import targets
from testkit.browser import BrowserHarness, run_hooks
from testkit.httpserver import FixtureServer, Reply
from testkit.rawserver import RawServer, drip, silent

pytestmark = pytest.mark.integration
NAV = {"NAVIGATE_TIMEOUT": "30", "NAVIGATE_SETTLE_MS": "500"}
"""The navigation's own time: a page whose dead subresources were not bounded (the silent
host holds each of its requests for the proxy's 60 s idle timeout) would end
E_NAVIGATE_TIMEOUT."""


@pytest.fixture(scope="module")
def silent_host() -> Iterator[RawServer]:
    """127.0.0.3: accepts every connection, reads, never answers (nor a TLS hello)."""
    with RawServer("127.0.0.3") as s:
        s.routes["/slow.js"] = s.routes["/slow.css"] = s.routes["/slow.png"] = silent
        yield s


@pytest.fixture(scope="module")
def dripping_host() -> Iterator[RawServer]:
    """127.0.0.5: answers at once, then drips its body (still open when a capture ends)."""
    with RawServer("127.0.0.5") as s:
        s.routes["/stream"] = drip(interval=0.2)
        yield s


@pytest.fixture(scope="module")
def closed_port() -> int:
    """A port on 127.0.0.4 nothing listens on (connections are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.4", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def site(
    silent_host: RawServer, dripping_host: RawServer, closed_port: int
) -> Iterator[FixtureServer]:
    dead = silent_host.base
    tunnel = f"https://{silent_host.host}:{silent_host.port}"
    page = f"""<html><head><title>Article</title>
<link rel="stylesheet" href="http://cdn.dead-host.invalid/site.css">
<script src="{dead}/slow.js"></script>
<link rel="stylesheet" href="{dead}/slow.css">
</head><body><h1>The article</h1><p id="after">text after a blocking script</p>
<img src="http://img.dead-host.invalid/a.png"><img src="{dead}/slow.png">
<img src="{tunnel}/tls.png"><img src="http://127.0.0.4:{closed_port}/refused.png">
<script>fetch("{dripping_host.base}/stream", {{mode: "no-cors"}}).catch(() => {{}});</script>
</body></html>"""
    with FixtureServer() as s:
        s.routes["/article"] = Reply(page.encode())
        yield s


def navigation(out: Path) -> dict:
    return json.loads((out / "navigate" / "navigate.json").read_text())


async def test_dead_subresources_fail_at_once_and_are_counted(
    browser: BrowserHarness, site: FixtureServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # 2.5 s: the page's own favicon and the dripping stream answer within it at load 9 (1 s
    # cut both under a loaded make test); the silent host never answers, whatever the bound
    policy = EgressPolicy(allow_private=True, subresource_timeout=2.5)
    with caplog.at_level(logging.DEBUG):
        seen = await run_hooks(
            browser, f"{site.base}/article", tmp_path, ["navigate"], page={"policy": policy}, **NAV
        )
    result = seen.final["navigate"]
    nav = navigation(tmp_path)
    assert (result.status, result.error_code) == ("succeeded", None), result.output_str
    assert nav["document"] and nav["status"] == 200
    failed = {(e["kind"], e["url"].rsplit("/", 1)[-1]) for e in nav["failed"]}
    # the name that does not exist, the silent host (plain, and tunnelled: the tunnel's URL
    # is its origin), the refused port
    assert failed == {
        ("no_such_host", "site.css"), ("no_such_host", "a.png"), ("connect", "refused.png"),
        ("timeout", "slow.js"), ("timeout", "slow.css"), ("timeout", "slow.png"),
        ("timeout", ""),
    }  # fmt: skip
    assert (nav["subresources"], nav["failed_subresources"]) == (8, 7)
    assert result.output_str.startswith("7 of 8 page resources not loaded · HTTP 200")
    # the rest of the page loaded after its blocking script failed
    assert nav["error"] is None and nav["refused"] == []
    # connections cut at the capture's end (the stream still open) are no error
    loud = [r for r in caplog.records if r.levelno > logging.DEBUG
            and (r.name == "asyncio" or r.name.startswith("services.archiver.egress"))]  # fmt: skip
    assert loud == [], [r.getMessage() for r in loud]


@pytest.mark.parametrize(
    ("target", "code"),
    [
        ("http://nothing-here.invalid/", "E_NAVIGATE_NO_HOST"),
        ("https://nothing-here.invalid/", "E_NAVIGATE_NO_HOST"),
        ("refused", "E_NAVIGATE_FAILED"),
        ("https-refused", "E_NAVIGATE_FAILED"),
    ],
)
async def test_the_main_documents_proxy_errors_map_to_navigation_codes(
    browser: BrowserHarness, tmp_path: Path, closed_port: int, target: str, code: str
) -> None:
    url = {
        "refused": f"http://127.0.0.4:{closed_port}/",
        "https-refused": f"https://127.0.0.4:{closed_port}/",
    }.get(target, target)
    seen = await run_hooks(browser, url, tmp_path, ["navigate"], page=None, **NAV)
    result = seen.final["navigate"]
    assert (result.status, result.error_code) == ("failed", code), result.output_str
    nav = navigation(tmp_path)
    assert nav["document"] is False and nav["status"] is None
    assert nav["error"]["message"].startswith(url), nav["error"]


async def test_a_dns_failure_for_now_is_retried(browser: BrowserHarness, tmp_path: Path) -> None:
    def no_answer(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    targets.use_resolver(no_answer)
    try:
        seen = await run_hooks(
            browser, "http://flaky-dns.test/", tmp_path, ["navigate"], page=None, **NAV
        )
    finally:
        targets.use_resolver(None)
    result = seen.final["navigate"]
    assert (result.status, result.error_code) == ("failed", "E_NAVIGATE_DNS")
    assert result.retry_at is not None and "for now" in result.output_str


async def test_the_main_document_is_not_cut_at_the_subresource_bound(
    browser: BrowserHarness, silent_host: RawServer, tmp_path: Path
) -> None:
    """A slow main document has the navigation's own timeout, not the subresources' bound:
    the navigation times out (hard, retried), it is not answered 504 by the proxy."""
    policy = EgressPolicy(allow_private=True, subresource_timeout=0.5)
    seen = await run_hooks(
        browser, f"{silent_host.base}/slow.js", tmp_path, ["navigate"], page={"policy": policy},
        NAVIGATE_TIMEOUT="4",
    )  # fmt: skip
    result = seen.final["navigate"]
    assert (result.status, result.error_code) == ("failed", "E_NAVIGATE_TIMEOUT")
    assert navigation_failed(tmp_path) == []


def navigation_failed(out: Path) -> list[dict]:
    path = out / "navigate" / "navigate.json"
    return json.loads(path.read_text())["failed"] if path.exists() else []


async def test_a_tunnel_whose_server_never_speaks_tls_is_cut(
    browser: BrowserHarness, tmp_path: Path
) -> None:
    with RawServer("127.0.0.6") as mute, FixtureServer() as site:
        site.routes["/p"] = Reply(
            f'<html><body><p>text</p><img src="https://{mute.host}:{mute.port}/x.png">'
            "</body></html>".encode()
        )
        # a 3 s bound, not 1 s: at load 6-10 the tunnel's own setup may take past a second.
        # No warming: it would connect to the mute host as soon as the page's HTML passed, and
        # at load 6-10 its cut (which is logged for no request) can come before Chromium asks
        # for the image, which then finds the host marked; test_egress_warm.py covers warming
        policy = EgressPolicy(allow_private=True, subresource_timeout=3.0, warm_origins=0)
        # the settle waits for the page's requests to end (up to 10 s here, not NAV's 0.5):
        # at load 6-10 the image's cut may come after the load event, and navigate.json
        # holds what the proxy logged by the time the navigation ended
        settle = {**NAV, "NAVIGATE_SETTLE_MS": "10000"}
        seen = await run_hooks(
            browser, f"{site.base}/p", tmp_path, ["navigate"], page={"policy": policy}, **settle
        )
    result = seen.final["navigate"]
    record = navigation(tmp_path)
    # everything the proxy logged, in each failure message: a CI failure at load 6-10 says
    # which of Chromium's tunnels ended how
    seen_by_proxy = {k: record.get(k) for k in ("failed", "refused", "error", "responses")}
    assert (result.status, result.error_code) == ("succeeded", None), (
        result.output_str,
        seen_by_proxy,
    )
    # the mute host's failures only: at load 6-10 the page's own favicon may also pass the
    # bound (CI failed on that extra entry), which says nothing about the tunnel
    failed = [e for e in record["failed"] if mute.host in str(e["url"])]
    # Each of the mute host's tunnels is cut by the 3 s bound: the one whose bound passed
    # ("no answer within 3 s", which marks the host) or one opened after the mark, answered
    # at once. Chromium may open several (a preconnect and the request, or again after a
    # cut), in whichever order a loaded machine lets them in; asking for the first reason
    # failed once on CI at load 6-10. Either reason proves the bound.
    bound = ("no answer within 3 s", f"{mute.host} left a request unanswered 3 s")
    assert failed, seen_by_proxy
    assert all(
        (e["tunnel"], e["kind"]) == (True, "timeout") and e["reason"] in bound for e in failed
    ), seen_by_proxy


def test_a_host_that_keeps_letting_the_bound_pass_is_skipped_longer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first miss skips the host for unresponsive_s, each further miss doubles it (up to
    the maximum), and a response head forgets the count. Time is the policy's clock."""
    import time

    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    policy = EgressPolicy(unresponsive_s=60, unresponsive_max_s=200)
    periods = []
    for _ in range(4):
        policy.mark_unresponsive("Ads.Example", 443)
        start = now[0]
        while policy.unresponsive("ads.example", 443):
            now[0] += 1
        periods.append(now[0] - start)
    assert periods == [60, 120, 200, 200]
    assert not policy.unresponsive("ads.example", 80)
    policy.answered("ads.example", 443)
    policy.mark_unresponsive("ads.example", 443)
    assert policy.unresponsive("ads.example", 443)
    now[0] += 60
    assert not policy.unresponsive("ads.example", 443)
