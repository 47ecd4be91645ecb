"""Connect to the address that was checked, never to a second DNS answer (no rebinding).

`pinned_transport(pins)` is an httpx transport whose TCP connects go to `pins[host]`, an IP
address the caller checked with `shared.targets.checked_addresses`. The URL keeps its host
name, so the Host header and TLS SNI/certificate checks still use the name: only the
address lookup is replaced. A host with no pin is refused before any connection.
"""

from __future__ import annotations

import typing
from collections.abc import MutableMapping

import httpcore
import httpx
from httpcore._backends.auto import AutoBackend

SocketOption = typing.Any


class UnpinnedHost(httpcore.ConnectError):
    """A connect to a host whose address was never checked."""


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """Network backend that maps each host name to its pinned (checked) address."""

    def __init__(self, pins: MutableMapping[str, str]) -> None:
        self.pins = pins
        self._inner = AutoBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        address = self.pins.get(host.strip("[]").lower())
        if address is None:
            raise UnpinnedHost(f"no checked address for {host}")
        return await self._inner.connect_tcp(
            address,
            port,
            timeout=timeout,
            local_address=local_address,
            socket_options=socket_options,
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise UnpinnedHost("unix sockets are not capture targets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


SSL_CONTEXT = httpx.create_ssl_context(trust_env=False)
"""One verifying TLS context for every capture request: loading the CA bundle costs ~30 ms,
so it is built once at import (in the hook host, before any hook is forked), not per fetch."""


def pinned_transport(pins: MutableMapping[str, str]) -> httpx.AsyncHTTPTransport:
    """An httpx transport (HTTP/1.1, no proxy from the env, no retries) connecting to pins."""
    transport = httpx.AsyncHTTPTransport(verify=SSL_CONTEXT, trust_env=False, retries=0)
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=SSL_CONTEXT,
        http1=True,
        http2=False,
        retries=0,
        network_backend=PinnedBackend(pins),
    )
    return transport
