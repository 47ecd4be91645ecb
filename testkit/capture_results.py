"""What capture workers published on `capture.>`, read back by a test from the results
stream."""

from __future__ import annotations

import asyncio

from shared import bus
from shared.messages import CaptureDone
from shared.subjects import MODELS, RESULTS


async def collect(
    nats_url: str, until_done: int, timeout: float, *, snapshot_id: str | None = None
) -> list[object]:
    """The messages on `capture.>` (of `snapshot_id` only, when given), read from the
    stream's start until `until_done` CaptureDone messages came; fails past `timeout`."""
    nc = await bus.connect(nats_url, "test-results")
    try:
        js = nc.jetstream()
        sub = await js.pull_subscribe("capture.>", stream=RESULTS.name)
        got: list[object] = []
        deadline = asyncio.get_running_loop().time() + timeout
        while sum(isinstance(m, CaptureDone) for m in got) < until_done:
            assert asyncio.get_running_loop().time() < deadline, f"timed out; got {got}"
            for msg in await bus.fetch(sub, 100, timeout=0.5):
                message = MODELS[msg.subject].model_validate_json(msg.data)
                if snapshot_id is None or getattr(message, "snapshot_id", None) == snapshot_id:
                    got.append(message)
                await msg.ack()
        return got
    finally:
        await nc.close()
