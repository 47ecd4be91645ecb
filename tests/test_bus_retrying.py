"""shared.bus's retry of NATS set-up calls: again each second while the call fails with an
awaited error, then a BusError naming what was tried; any other error at once."""

from __future__ import annotations

import asyncio

import pytest

from shared import bus
from shared.errors import BusError


def test_a_call_that_recovers_is_answered_and_one_that_does_not_gives_up() -> None:
    tries: list[int] = []

    async def flaky() -> str:
        tries.append(1)
        if len(tries) < 2:
            raise TimeoutError("not yet")
        return "set up"

    assert asyncio.run(bus._retrying(flaky, (TimeoutError,), 5, "consumer x")) == "set up"
    assert len(tries) == 2

    async def never() -> str:
        raise TimeoutError("no leader")

    with pytest.raises(BusError, match="consumer x: TimeoutError\\('no leader'\\)"):
        asyncio.run(bus._retrying(never, (TimeoutError,), 0, "consumer x"))

    async def wrong() -> str:
        raise ValueError("a bug")

    with pytest.raises(ValueError):
        asyncio.run(bus._retrying(wrong, (TimeoutError,), 5, "consumer x"))
