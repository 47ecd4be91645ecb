"""The process's DNS cache (shared/dnscache.py) and the judge's async path (shared/targets.py):
one lookup per name however many requests ask at once, answers and "no such name" kept,
a failure "for now" kept briefly, a waiter's timeout a failure for now while the lookup's
answer still reaches the cache, and the oldest names dropped past the size."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator

import pytest

from shared import targets
from shared.dnscache import DnsCache
from shared.errors import NoSuchHost, TargetRefused, TargetUnresolved


class Resolver:
    """A test lookup: answers from a table, counts calls, can be held until released."""

    def __init__(self, table: dict[str, list[str] | int]) -> None:
        self.table = table
        self.calls: list[str] = []
        self.gate = threading.Event()
        self.gate.set()

    def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append(host)
        self.gate.wait(10)
        answer = self.table.get(host, socket.EAI_NONAME)
        if isinstance(answer, int):
            raise socket.gaierror(answer, "test resolver says no")
        return answer


@pytest.fixture
def resolver() -> Iterator[Resolver]:
    fake = Resolver({"a.test": ["93.184.216.34"], "private.test": ["10.0.0.1"],
                     "flaky.test": socket.EAI_AGAIN})  # fmt: skip
    targets.use_resolver(fake)
    try:
        yield fake
    finally:
        targets.use_resolver(None)


async def test_concurrent_lookups_of_a_name_share_one_call(resolver: Resolver) -> None:
    resolver.gate.clear()
    waiting = [asyncio.create_task(targets.resolve_async("A.test", 443)) for _ in range(20)]
    await asyncio.sleep(0.05)
    resolver.gate.set()
    assert await asyncio.gather(*waiting) == [["93.184.216.34"]] * 20
    assert await targets.resolve_async("a.test", 80) == ["93.184.216.34"]
    assert targets.resolve("a.test", 80) == ["93.184.216.34"]
    assert resolver.calls == ["a.test"]


async def test_no_such_name_is_kept_and_refused(resolver: Resolver) -> None:
    for _ in range(3):
        with pytest.raises(NoSuchHost):
            await targets.checked_host("gone.test", 80, allow_private=False)
    assert resolver.calls == ["gone.test"]
    with pytest.raises(TargetRefused, match="non-public"):
        await targets.checked_host("private.test", 80, allow_private=False)
    assert await targets.checked_host("private.test", 80, allow_private=True) == ["10.0.0.1"]


async def test_a_failure_for_now_is_unresolved_and_kept_briefly(resolver: Resolver) -> None:
    with pytest.raises(TargetUnresolved):
        await targets.checked_url("http://flaky.test/", allow_private=False)
    with pytest.raises(TargetUnresolved):
        targets.checked_addresses("http://flaky.test/", allow_private=False)
    assert resolver.calls == ["flaky.test"]
    answer = targets.dns_cache.cached("flaky.test")
    assert answer is not None and answer.expires - asyncio.get_running_loop().time() < 6


async def test_a_waiter_that_gives_up_leaves_the_answer_for_the_next(resolver: Resolver) -> None:
    resolver.gate.clear()
    with pytest.raises(TargetUnresolved, match=r"within 0\.05 s"):
        await targets.resolve_async("a.test", 80, timeout=0.05)
    resolver.gate.set()
    assert await targets.resolve_async("a.test", 80, timeout=5) == ["93.184.216.34"]
    assert resolver.calls == ["a.test"]


def test_the_oldest_names_are_dropped_past_the_size() -> None:
    calls: list[str] = []

    def lookup(host: str, port: int) -> list[str]:
        calls.append(host)
        return ["93.184.216.34"]

    cache = DnsCache(ttl=60, size=2)
    for host in ("one.test", "two.test", "one.test", "three.test", "one.test", "two.test"):
        cache.resolve(lookup, host, 80)
    # one stays (used last before three came), two was the least recently used
    assert calls == ["one.test", "two.test", "three.test", "two.test"]


def test_answers_expire() -> None:
    calls: list[str] = []

    def lookup(host: str, port: int) -> list[str]:
        calls.append(host)
        return ["93.184.216.34"]

    cache = DnsCache(ttl=0)
    cache.resolve(lookup, "a.test", 80)
    cache.resolve(lookup, "a.test", 80)
    assert calls == ["a.test", "a.test"]
