"""shared.bus's retry of NATS set-up calls: again each second while the call fails with an
awaited error, then a BusError naming what was tried; any other error at once. What its
connection logs (a real nats-server)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from services.supervisor.infra import start_nats
from shared import bus
from shared.errors import BusError
from testkit.stack_env import ENGINES_GRACE_S


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


async def test_closing_our_own_connection_is_no_disconnection(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """`dla up` connects to declare the streams and closes: nothing to report. A server
    that goes away is reported."""
    server = start_nats(tmp_path / "nats", tmp_path / "nats.log")
    try:
        with caplog.at_level(logging.INFO, logger="shared.bus"):
            nc = await bus.connect(server.url, "test", connect_timeout=10)
            await nc.close()
            assert "nats: disconnected" not in caplog.text
            nc = await bus.connect(server.url, "test", connect_timeout=10)
            server.child.stop(ENGINES_GRACE_S)
            # the client notices the closed socket at once; 60 s of room for a loaded machine
            deadline = asyncio.get_running_loop().time() + 60
            while "nats: disconnected" not in caplog.text:
                assert asyncio.get_running_loop().time() < deadline, caplog.text
                await asyncio.sleep(0.1)
            await nc.close()
    finally:
        server.child.stop(ENGINES_GRACE_S)
