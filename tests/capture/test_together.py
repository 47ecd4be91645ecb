"""A capture worker's loops run together: when one fails, the others are stopped and end
their own way, and the error reaches the service (which exits and is restarted) instead of
the others running on beside a closed NATS connection."""

from __future__ import annotations

import asyncio

import pytest

from shared.capture.service import together


async def test_one_loop_failing_stops_the_others_and_raises() -> None:
    stop = asyncio.Event()
    ended: list[str] = []

    async def loop(name: str) -> None:
        await stop.wait()
        await asyncio.sleep(0.05)  # a drain
        ended.append(name)

    async def failing() -> None:
        await asyncio.sleep(0.01)
        raise RuntimeError("consumer could not be set up")

    with pytest.raises(RuntimeError, match="consumer could not be set up"):
        await asyncio.wait_for(together(stop, loop("worker"), failing(), loop("checker")), 5)
    assert stop.is_set()
    assert sorted(ended) == ["checker", "worker"]  # each ended (drained) before the raise


async def test_a_stop_ends_them_all_quietly() -> None:
    stop = asyncio.Event()

    async def loop() -> None:
        await stop.wait()

    asyncio.get_running_loop().call_later(0.02, stop.set)
    await asyncio.wait_for(together(stop, loop(), loop()), 5)
