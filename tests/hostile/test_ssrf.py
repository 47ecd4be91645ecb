"""SSRF matrix in production mode (ALLOW_PRIVATE_TARGETS off): every spelling of a loopback,
private, link-local or metadata address, names resolving there, redirects into them and DNS
answers that change between check and connect are refused (100 %) and recorded.

Names are resolved by a test resolver (shared.targets.use_resolver), numeric spellings by
getaddrinfo with AI_NUMERICHOST: no DNS query leaves the machine. For the fetch path, the
"internet" is simulated on loopback: a few public addresses are routed to fixture servers on
127.0.0.1 by the connect layer under the pinned transport; any other connect fails without
traffic. What is tested is the real shared.targets + shared.fetching code.
"""

from __future__ import annotations

import asyncio
import socket
import typing
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpcore
import pytest
from httpcore._backends.auto import AutoBackend

from shared import targets
from shared.errors import TargetRefused
from shared.fetching import pinning
from shared.fetching.exchange import Fetch, FetchLimits
from testkit.chaos import record
from testkit.httpserver import FixtureServer, Reply

PUBLIC_A, PUBLIC_B = "93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"
NAMES: dict[str, list[str]] = {
    "internal.test": ["10.1.2.3"],
    "db.corp.test": ["192.168.7.7"],
    "metadata.google.internal": ["169.254.169.254"],
    "mixed.test": [PUBLIC_A, "127.0.0.1"],
    "v6-private.test": ["fd00::5"],
    "mapped.test": ["::ffff:10.0.0.1"],
    "nat64.test": ["64:ff9b::a9fe:a9fe"],
    "public.test": [PUBLIC_A],
    "other.test": [PUBLIC_A],
}


def offline_resolve(host: str, port: int) -> list[str]:
    """Numeric spellings as the C library reads them; test names from NAMES; nothing else."""
    if host.lower().rstrip(".") in NAMES:
        return NAMES[host.lower().rstrip(".")]
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    except socket.gaierror:
        if host.lower().rstrip(".") in ("localhost", "ip6-localhost"):
            return ["127.0.0.1", "::1"]
        raise socket.gaierror(socket.EAI_NONAME, "unknown name in the test resolver") from None
    return sorted({str(i[4][0]) for i in infos})


@pytest.fixture(autouse=True)
def offline_resolver() -> Iterator[None]:
    targets.use_resolver(offline_resolve)
    try:
        yield
    finally:
        targets.use_resolver(None)


MATRIX: dict[str, list[str]] = {
    "loopback": [
        "http://127.0.0.1/", "http://127.0.0.2:8080/x", "http://127.1/", "http://0/",
        "http://0.0.0.0/", "http://localhost/", "http://LOCALHOST./", "http://[::1]/",
        "http://[0:0:0:0:0:0:0:1]/", "http://[::]/", "http://[::127.0.0.1]/",
    ],
    "private": [
        "http://10.0.0.1/", "http://172.16.0.1/", "http://172.31.255.255/",
        "http://192.168.1.1/", "http://100.64.0.1/", "http://198.18.0.1/",
        "http://[fc00::1]/", "http://[fd12:3456::1]/",
    ],
    "link_local": ["http://169.254.0.1/", "http://[fe80::1]/", "http://[fe80::1%25eth0]/"],
    "metadata": [
        "http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/",
        "http://100.100.100.200/", "http://192.0.0.192/", "http://metadata.google.internal/",
    ],
    "ipv4_in_ipv6": [
        "http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/", "http://[::ffff:a9fe:a9fe]/",
        "http://[::ffff:10.0.0.1]/", "http://[64:ff9b::a9fe:a9fe]/", "http://[2002:a9fe:a9fe::]/",
        "http://[2002:7f00:1::]/", "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
    ],
    "numeric_spellings": [
        "http://2130706433/", "http://0x7f000001/", "http://0x7F.0.0.1/", "http://0177.0.0.1/",
        "http://017700000001/", "http://127.000.000.001/", "http://0x7f.1/",
        "http://2852039166/", "http://0xA9FEA9FE/", "http://0251.0376.0251.0376/",
        "http://0xa9.0xfe.0xa9.0xfe/", "http://3232235777/", "http://012.0.0.1/",
    ],
    "names": [
        "http://internal.test/", "http://db.corp.test:5432/", "http://mixed.test/",
        "http://v6-private.test/", "http://mapped.test/", "http://nat64.test/",
        "http://user:pw@internal.test/", "http://INTERNAL.TEST./",
    ],
    "schemes": [
        "file:///etc/passwd", "gopher://127.0.0.1:25/", "ftp://10.0.0.1/", "dict://127.0.0.1/",
        "javascript:alert(1)", "http:///nohost", "http://[::1/",
    ],
}  # fmt: skip


def test_every_form_is_refused_by_the_target_check() -> None:
    allowed: list[str] = []
    refused: dict[str, int] = {}
    for category, urls in MATRIX.items():
        for url in urls:
            try:
                targets.check_target(url, allow_private=False)
            except TargetRefused:
                refused[category] = refused.get(category, 0) + 1
            else:
                allowed.append(url)
    total = sum(len(u) for u in MATRIX.values())
    record("ssrf_check", {"cases": total, "refused": sum(refused.values()), "by_kind": refused})
    assert allowed == [], f"not refused: {allowed}"


def test_public_addresses_pass_so_the_matrix_means_something() -> None:
    for url in ("http://public.test/", f"http://{PUBLIC_A}/", f"http://[{PUBLIC_B}]/"):
        assert targets.check_target(url, allow_private=False)


class Internet(AutoBackend):
    """The connect layer under the pinned transport: public test addresses lead to fixture
    servers on 127.0.0.1; every connect is recorded; anything else fails (no traffic)."""

    routes: typing.ClassVar[dict[str, int]] = {}
    connects: typing.ClassVar[list[str]] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        Internet.connects.append(host)
        if host not in Internet.routes:
            raise httpcore.ConnectError(f"{host} is not reachable in this test")
        return await super().connect_tcp(
            "127.0.0.1", Internet.routes[host], timeout, local_address, socket_options
        )


@pytest.fixture
def internet(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[Internet]]:
    monkeypatch.setattr(pinning, "AutoBackend", Internet)
    Internet.routes, Internet.connects = {}, []
    yield Internet


def fetch(url: str, tmp_path: Path) -> tuple[str | None, str]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    f = Fetch(FetchLimits(total_timeout=10), user_agent="t", allow_private=False, workdir=work)
    result = asyncio.run(f.run(url))
    return result.error, result.message or ""


REDIRECT_TARGETS = [u for k in ("loopback", "private", "metadata", "numeric_spellings", "names",
                                "ipv4_in_ipv6") for u in MATRIX[k]]  # fmt: skip


def test_redirects_into_private_targets_are_refused(
    internet: type[Internet], tmp_path: Path
) -> None:
    outcomes: dict[str, str | None] = {}
    with FixtureServer("127.0.0.1") as public, FixtureServer("127.0.0.1") as canary:
        canary.routes["/"] = Reply(b"secret")
        internet.routes[PUBLIC_A] = public.port
        for i, target in enumerate(REDIRECT_TARGETS):
            public.routes[f"/r{i}"] = Reply(b"", 302, {"Location": target})
            error, _ = fetch(f"http://public.test:{public.port}/r{i}", tmp_path)
            outcomes[target] = error
        hits = len(canary.requests)
    # REFUSED by the target check, or FAILED because httpx will not even parse the Location
    # (octal or zero-padded IPv4 spellings): either way never connected, and recorded.
    leaked = {t: e for t, e in outcomes.items() if e not in ("REFUSED", "FAILED")}
    unparsed = sorted(t for t, e in outcomes.items() if e == "FAILED")
    record(
        "ssrf_redirects",
        {
            "cases": len(outcomes),
            "refused": sum(1 for e in outcomes.values() if e == "REFUSED"),
            "location_rejected_by_httpx": len(unparsed),
            "canary_hits": hits,
            "connects_to_non_public": len(set(internet.connects) - {PUBLIC_A}),
        },
    )
    assert leaked == {}, leaked
    assert hits == 0
    assert set(internet.connects) == {PUBLIC_A}, "only the public host was ever connected"
    assert all(t.split("/")[2].split(".")[0].startswith("0") or "000" in t for t in unparsed), (
        unparsed
    )


def test_dns_answer_changing_between_check_and_connect_is_not_followed(
    internet: type[Internet], tmp_path: Path
) -> None:
    answers = [[PUBLIC_A], ["127.0.0.1"]]
    calls: list[str] = []

    def rebinding(host: str, port: int) -> list[str]:
        if host != "rebind.test":
            return offline_resolve(host, port)
        calls.append(host)
        return answers[min(len(calls), len(answers)) - 1]

    targets.use_resolver(rebinding)
    with FixtureServer("127.0.0.1") as public, FixtureServer("127.0.0.1") as canary:
        public.routes["/"] = Reply(b"<html><p>public page</p></html>")
        canary.routes["/"] = Reply(b"secret")
        internet.routes[PUBLIC_A] = public.port
        error, message = fetch(f"http://rebind.test:{public.port}/", tmp_path)
        # The name was checked once; the connect went to the checked answer, not a new one.
        assert (error, calls, internet.connects) == (None, ["rebind.test"], [PUBLIC_A]), message
        # Once the cached answer is gone, the name is resolved again: the private answer is
        # refused before any connect.
        targets.dns_cache.clear()
        error, _ = fetch(f"http://rebind.test:{canary.port}/", tmp_path)
        assert error == "REFUSED" and internet.connects == [PUBLIC_A]
        assert canary.requests == []
    record("ssrf_rebinding", {"cases": 2, "refused_or_pinned": 2, "canary_hits": 0})


@pytest.fixture
def uncached() -> Iterator[None]:
    """No DNS answer is kept: each lookup asks the resolver (as once an answer expired)."""
    size, targets.dns_cache.size = targets.dns_cache.size, 0
    try:
        yield
    finally:
        targets.dns_cache.size = size


def test_short_link_resolution_is_pinned_and_refuses_private_hops(
    internet: type[Internet], uncached: None
) -> None:
    import httpx

    from services.poller.resolve import Resolver

    answers = [[PUBLIC_A], ["127.0.0.1"]]
    calls: list[str] = []

    def rebinding(host: str, port: int) -> list[str]:
        if host != "bit.ly":
            return offline_resolve(host, port)
        calls.append(host)
        return answers[min(len(calls), len(answers)) - 1]

    targets.use_resolver(rebinding)

    async def resolve(url: str) -> str | None:
        async with httpx.AsyncClient(timeout=5) as client:
            resolver = Resolver(client, allow_private=False)
            try:
                return await resolver.final_url(url)
            finally:
                await resolver.aclose()

    with FixtureServer("127.0.0.1") as public, FixtureServer("127.0.0.1") as canary:
        internet.routes[PUBLIC_A] = public.port
        # The first answer is public (and connected to); the redirect goes to the same short
        # host, which now answers 127.0.0.1: refused, never connected.
        public.routes["/a"] = Reply(b"", 301, {"Location": f"http://bit.ly:{canary.port}/b"})
        assert asyncio.run(resolve(f"http://bit.ly:{public.port}/a")) is None
        assert (calls, set(internet.connects), canary.requests) == (["bit.ly"] * 2, {PUBLIC_A}, [])
        # A final URL that is no short link is returned, not requested (the capture checks it).
        public.routes["/c"] = Reply(b"", 301, {"Location": f"http://localhost:{canary.port}/"})
        answers[1:] = [[PUBLIC_A]]
        final = asyncio.run(resolve(f"http://bit.ly:{public.port}/c"))
        assert final == f"http://localhost:{canary.port}/" and canary.requests == []
    record("ssrf_short_links", {"cases": 2, "refused": 2, "canary_hits": 0})


BROWSER_KINDS = (
    "loopback", "private", "link_local", "metadata", "ipv4_in_ipv6", "numeric_spellings", "names",
)  # fmt: skip


async def through_proxy(proxy: str, request: bytes) -> bytes:
    host, port = proxy.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(request)
        await writer.drain()
        return await asyncio.wait_for(reader.read(4096), 10)
    finally:
        writer.close()


async def browser_matrix() -> tuple[int, list[str]]:
    """Every sub-request the browser could make (plain proxy GET and HTTPS CONNECT) to every
    spelling of the matrix, through the archiver's egress proxy in production mode."""
    from services.archiver.egress import EgressPolicy, EgressProxy

    proxy = EgressProxy(EgressPolicy(allow_private=False), 1 << 20, idle_timeout=5)
    url = await proxy.start()
    leaked: list[str] = []
    cases = 0
    try:
        for kind in BROWSER_KINDS:
            for target in MATRIX[kind]:
                split = urlsplit(target)
                authority = split.netloc.rsplit("@", 1)[-1]
                if "%25" in authority or not split.hostname:
                    continue  # a zone id is no proxy target a browser sends
                host = split.hostname
                tunnel = f"[{host}]:443" if ":" in host else f"{host}:443"
                for request in (
                    f"GET {target} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode(),
                    f"CONNECT {tunnel} HTTP/1.1\r\n\r\n".encode(),
                ):
                    cases += 1
                    answer = await through_proxy(url, request)
                    if b"X-Archiver-Refused: 1" not in answer:
                        leaked.append(f"{request[:60]!r} -> {answer[:60]!r}")
        recorded = len(proxy.log.refused)
    finally:
        await proxy.close()
    assert recorded == cases - len(leaked), (recorded, cases)
    return cases, leaked


def test_browser_subrequests_are_refused_and_recorded() -> None:
    """Browser sub-requests go through the archiver's egress proxy (redirect hops, images,
    frames, tunnels); here every spelling reaches it as a plain GET and as a CONNECT. The real
    Chromium path (a redirect to 127.0.0.1, a loopback image) is in tests/archiver's hostile
    page tests."""
    cases, leaked = asyncio.run(browser_matrix())
    record("ssrf_browser", {"cases": cases, "refused": cases - len(leaked)})
    assert leaked == [], leaked
