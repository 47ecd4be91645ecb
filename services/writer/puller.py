"""A batch reader of a durable pull consumer, cheaper per message than nats-py's fetch().

nats-py's ``PullSubscription.fetch`` waits for every message with its own
``asyncio.wait_for``, which costs ~60 µs a message: a third of the writer's budget. This
reader sends the same JetStream pull requests (``$JS.API.CONSUMER.MSG.NEXT``) and collects
the replies in a subscription callback. One request is outstanding at a time; ``fetch``
returns when the batch is full, the request ended (fully served, expired, or a status such
as 404/408/409), or a few milliseconds passed since the first message. Messages
are ordinary JetStream messages: ``ack``, ``nak`` and ``term`` work on them as usual.
"""

from __future__ import annotations

import asyncio
import json
import time

from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.js import JetStreamContext

from shared import bus
from shared.subjects import (
    WRITER_CHECKS,
    WRITER_COMMANDS,
    WRITER_FEED,
    WRITER_RESULTS,
    ConsumerSpec,
)

WRITER_CONSUMERS = (WRITER_FEED, WRITER_RESULTS, WRITER_COMMANDS, WRITER_CHECKS)
"""The durable consumers the writer reads."""

QUIET_S = 0.003
"""After the first message, return once no other one arrived for this long..."""
LINGER_S = 0.01
"""... or once this long passed since the first one (a steady stream never goes quiet)."""


class Puller:
    """Reads one durable pull consumer in batches; create with ``await Puller.create(...)``."""

    def __init__(self, nc: Client, spec: ConsumerSpec) -> None:
        self.nc = nc
        self.spec = spec
        self.inbox = nc.new_inbox()
        self._next = f"$JS.API.CONSUMER.MSG.NEXT.{spec.stream.name}.{spec.durable}"
        self._sub: Subscription | None = None
        self._buf: list[Msg] = []
        self._arrived = asyncio.Event()
        self._remaining = 0
        self._request_ends = 0.0

    @classmethod
    async def create(cls, nc: Client, js: JetStreamContext, spec: ConsumerSpec) -> Puller:
        """Create (or update to spec) the durable consumer and subscribe."""
        await bus.ensure_consumer(js, spec)
        puller = cls(nc, spec)
        puller._sub = await nc.subscribe(puller.inbox, cb=puller._on_msg)
        return puller

    async def _on_msg(self, msg: Msg) -> None:
        if JetStreamContext.is_status_msg(msg):
            self._remaining = 0  # 404 no messages, 408 expired, 409 ...: the request is over
        else:
            self._buf.append(msg)
            self._remaining -= 1
        self._arrived.set()

    def _request_active(self) -> bool:
        return self._remaining > 0 and time.monotonic() < self._request_ends

    async def fetch(self, batch: int, timeout: float) -> list[Msg]:
        """Up to `batch` messages; [] when none came within `timeout`."""
        if not self._request_active() and len(self._buf) < batch:
            want = batch - len(self._buf)
            self._remaining = want
            self._request_ends = time.monotonic() + timeout + 1.0
            request = {"batch": want, "expires": int(timeout * 1e9)}
            await self.nc.publish(self._next, json.dumps(request).encode(), reply=self.inbox)
        deadline = time.monotonic() + timeout
        first: float | None = time.monotonic() if self._buf else None
        while len(self._buf) < batch and self._request_active():
            now = time.monotonic()
            if first is None and self._buf:
                first = now
            wait = deadline - now if first is None else min(QUIET_S, first + LINGER_S - now)
            if wait <= 0:
                break
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), wait)
            except TimeoutError:
                if self._buf:
                    break
        msgs, self._buf = self._buf[:batch], self._buf[batch:]
        return msgs

    async def close(self) -> None:
        """Stop receiving (messages delivered but not fetched are redelivered after ack wait)."""
        if self._sub is not None:
            await self._sub.unsubscribe()
            self._sub = None

    async def pending(self) -> int:
        """Messages not delivered yet plus delivered but unacknowledged."""
        info = await self.nc.jetstream().consumer_info(self.spec.stream.name, self.spec.durable)
        return int(info.num_pending or 0) + int(info.num_ack_pending or 0)
