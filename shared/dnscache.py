"""A process's cache of DNS answers: positive and negative, bounded by age and by size.

`shared.targets` resolves every capture target's name through one `DnsCache` per process
(the raw fetch, the poller's short-link resolver, the archiver's egress proxy). A real page
names 10 to 50 hosts, each in many requests, and a resolver can drop a query now and then
(glibc then waits its 5 s timeout before asking again): one lookup per name, shared by
every request that needs it, costs that at most once.

- Lookups run in threads of their own (`getaddrinfo` blocks; at most `workers` at once),
  never on an event loop and never in the loop's default executor, which a few stalled
  lookups would fill. They are daemon threads: a lookup still waiting on a silent DNS
  server never holds up the exit of its process (a hook's, say).
- Concurrent lookups of one name share one call; a waiter that gives up (its timeout)
  leaves the call running, and its answer is cached for the next.
- An answer is kept `ttl` seconds; "no such name" is kept as long; a failure "for now"
  (`EAI_AGAIN`, no answer from the DNS server) only `transient_ttl` seconds. Past `size`
  names the least recently used is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

Lookup = Callable[[str, int], list[str]]
"""(host, port) -> every address it resolves to; raises socket.gaierror."""

TEMPORARY_DNS_ERRORS = frozenset({socket.EAI_AGAIN})
"""getaddrinfo errors that say "try again later" rather than "no such name"."""


@dataclass(frozen=True)
class DnsAnswer:
    """One name's cached answer: its addresses, or the error the lookup raised."""

    addresses: tuple[str, ...]
    error: Exception | None
    expires: float

    def result(self) -> list[str]:
        """The addresses, or the lookup's error raised again."""
        if self.error is not None:
            raise self.error
        return list(self.addresses)


class DnsCache:
    """Answers by lower-cased host name (the port does not change a host's addresses)."""

    def __init__(
        self,
        ttl: float = 60.0,
        size: int = 4096,
        *,
        transient_ttl: float = 5.0,
        workers: int = 16,
    ) -> None:
        self.ttl, self.size, self.transient_ttl = ttl, size, transient_ttl
        self._answers: OrderedDict[str, DnsAnswer] = OrderedDict()
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(workers)
        self._inflight: dict[tuple[asyncio.AbstractEventLoop, str], asyncio.Future[DnsAnswer]] = {}

    def clear(self) -> None:
        """Forget every answer (a new lookup function, new settings)."""
        with self._lock:
            self._answers.clear()

    def cached(self, host: str) -> DnsAnswer | None:
        """The unexpired answer for host, if any."""
        key = host.lower()
        with self._lock:
            answer = self._answers.get(key)
            if answer is None:
                return None
            if answer.expires <= time.monotonic():
                del self._answers[key]
                return None
            self._answers.move_to_end(key)
            return answer

    def _store(self, host: str, answer: DnsAnswer) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._answers[host.lower()] = answer
            self._answers.move_to_end(host.lower())
            while len(self._answers) > self.size:
                self._answers.popitem(last=False)

    def _call(self, lookup: Lookup, host: str, port: int) -> DnsAnswer:
        """Run the lookup and cache what it says."""
        try:
            with self._slots:
                addresses = tuple(lookup(host, port))
        except (OSError, UnicodeError) as exc:  # gaierror; an IDNA label it cannot encode
            transient = isinstance(exc, socket.gaierror) and exc.errno in TEMPORARY_DNS_ERRORS
            ttl = self.transient_ttl if transient else self.ttl
            answer = DnsAnswer((), exc, time.monotonic() + ttl)
        else:
            answer = DnsAnswer(addresses, None, time.monotonic() + self.ttl)
        self._store(host, answer)
        return answer

    def resolve(self, lookup: Lookup, host: str, port: int) -> list[str]:
        """Blocking: the cached answer, else a lookup in this thread."""
        host = host.lower()
        answer = self.cached(host) or self._call(lookup, host, port)
        return answer.result()

    async def resolve_async(
        self, lookup: Lookup, host: str, port: int, timeout: float | None = None
    ) -> list[str]:
        """The cached answer, else the one lookup of host under way (started if none);
        raises TimeoutError when no answer came within `timeout` seconds (the lookup goes
        on and caches its answer)."""
        host = host.lower()
        answer = self.cached(host)
        if answer is None:
            loop = asyncio.get_running_loop()
            key = (loop, host)
            pending = self._inflight.get(key)
            if pending is None:
                pending = self._inflight[key] = loop.create_future()
                pending.add_done_callback(lambda _: self._inflight.pop(key, None))
                threading.Thread(
                    target=self._answer, args=(loop, pending, lookup, host, port), daemon=True
                ).start()
            answer = await asyncio.wait_for(asyncio.shield(pending), timeout)
        return answer.result()

    def _answer(
        self,
        loop: asyncio.AbstractEventLoop,
        pending: asyncio.Future[DnsAnswer],
        lookup: Lookup,
        host: str,
        port: int,
    ) -> None:
        """A lookup thread: resolve, cache, and hand the answer to the waiting loop."""
        answer = self._call(lookup, host, port)

        def deliver() -> None:
            if not pending.done():
                pending.set_result(answer)

        # a loop closed meanwhile raises RuntimeError: the answer is cached all the same
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(deliver)
