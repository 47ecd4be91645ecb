"""The fetch connects to the address that was checked: no second DNS lookup (rebinding)."""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest

from shared.fetching.exchange import Fetch, FetchLimits
from shared.fetching.pinning import pinned_transport
from testkit.httpserver import FixtureServer, Reply, Serve


@pytest.fixture
def site(serve: Serve) -> FixtureServer:
    return serve({"/page": Reply(b"<p>pinned</p>")})


@pytest.fixture
def no_name_lookups(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """socket.getaddrinfo refuses every host name (IP literals still pass)."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def guarded(host: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            ipaddress.ip_address(host)
        except ValueError:
            asked.append(str(host))
            raise socket.gaierror(f"test: name lookup of {host} is forbidden") from None
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", guarded)
    return asked


async def test_transport_connects_to_the_pin_and_keeps_the_host_header(
    site: FixtureServer, no_name_lookups: list[str]
) -> None:
    pins = {"archive-target.invalid": "127.0.0.1"}
    async with httpx.AsyncClient(transport=pinned_transport(pins)) as client:
        r = await client.get(f"http://archive-target.invalid:{site.port}/page")
    assert r.text == "<p>pinned</p>"
    assert site.requests[0][1]["Host"] == f"archive-target.invalid:{site.port}"
    assert not no_name_lookups


async def test_unpinned_host_is_never_connected(site: FixtureServer) -> None:
    async with httpx.AsyncClient(transport=pinned_transport({})) as client:
        with pytest.raises(httpx.ConnectError, match="no checked address"):
            await client.get(f"http://127.0.0.1:{site.port}/page")
    assert not site.requests


async def test_fetch_resolves_each_hop_once_and_connects_to_that_answer(
    site: FixtureServer, no_name_lookups: list[str], tmp_path: Path
) -> None:
    site.routes["/hop"] = Reply(b"", 302, {"Location": f"http://second.invalid:{site.port}/page"})
    checked: list[str] = []

    async def resolve(url: str, *, allow_private: bool) -> list[str]:
        checked.append(url)
        return ["127.0.0.1"]

    fetch = Fetch(
        FetchLimits(total_timeout=10),
        user_agent="t",
        allow_private=False,
        workdir=tmp_path,
        resolve=resolve,
    )
    res = await fetch.run(f"http://first.invalid:{site.port}/hop")
    assert res.error is None and res.final_url == f"http://second.invalid:{site.port}/page"
    assert checked == [f"http://first.invalid:{site.port}/hop", res.final_url]
    assert not no_name_lookups, "the connect must not look the name up again"
    assert [h["Host"] for _, h in site.requests] == [
        f"first.invalid:{site.port}",
        f"second.invalid:{site.port}",
    ]
