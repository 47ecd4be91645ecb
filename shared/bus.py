"""NATS JetStream plumbing: connect, declare streams and consumers, publish, fetch, and settle
a job message (accept or terminate, nak later, hand back)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import nats
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import ConnectionClosedError, NoServersError
from nats.js import JetStreamContext
from nats.js.api import ConsumerConfig, StreamConfig
from nats.js.errors import NotFoundError
from pydantic import ValidationError

from shared.errors import BusError
from shared.messages import Message
from shared.subjects import STREAMS, ConsumerSpec

log = logging.getLogger(__name__)

PullSub = JetStreamContext.PullSubscription
M = TypeVar("M", bound=Message)
T = TypeVar("T")


async def connect(url: str, name: str, *, connect_timeout: float = 60.0) -> Client:
    """Connect, with endless reconnects afterwards. While no server answers, nats-py itself
    keeps trying (every `reconnect_time_wait`, as it reconnects): a service waits for NATS,
    and its stop cancels the wait (shared.lifecycle.unless_stopped); an error nats-py raises
    instead is retried for `connect_timeout` seconds, then BusError."""

    made: list[Client] = []

    async def on_error(exc: Exception) -> None:
        log.warning("nats: %s", exc)

    async def on_disconnect() -> None:
        if made and made[0].is_closed:  # our own close() (`dla up` after declaring): no news
            return
        log.info("nats: disconnected")

    async def on_reconnect() -> None:
        log.info("nats: reconnected")

    client = await _retrying(
        lambda: nats.connect(
            servers=[s.strip() for s in url.split(",") if s.strip()],
            name=name,
            max_reconnect_attempts=-1,
            reconnect_time_wait=0.5,
            connect_timeout=2,
            error_cb=on_error,
            disconnected_cb=on_disconnect,
            reconnected_cb=on_reconnect,
        ),
        (NoServersError, OSError, TimeoutError),
        connect_timeout,
        f"cannot reach NATS at {url}",
    )
    made.append(client)
    return client


async def _retrying(
    call: Callable[[], Awaitable[T]],
    errors: tuple[type[BaseException], ...],
    within: float,
    what: str,
) -> T:
    """`call()`, once a second again while it raises one of `errors`, for `within` seconds;
    then BusError("<what>: <its error>")."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        try:
            return await call()
        except errors as exc:
            if loop.time() > deadline:
                raise BusError(f"{what}: {exc!r}") from exc
            log.warning("nats: %s (%r); retrying", what, exc)
            await asyncio.sleep(1)


async def ensure_streams(js: JetStreamContext, replicas: int = 1) -> None:
    """Create or update every stream declared in shared.subjects (idempotent), each with
    `replicas` copies (NATS_REPLICAS)."""
    for spec in STREAMS:
        config = StreamConfig(
            name=spec.name,
            subjects=list(spec.subjects),
            retention=spec.retention,
            duplicate_window=spec.duplicate_window_s,
            num_replicas=replicas,
        )
        try:
            await js.stream_info(spec.name)
            await js.update_stream(config)
        except NotFoundError:
            await js.add_stream(config)


def consumer_config(spec: ConsumerSpec) -> ConsumerConfig:
    """The JetStream configuration of a durable pull consumer."""
    return ConsumerConfig(
        durable_name=spec.durable,
        ack_wait=spec.ack_wait_s,
        max_deliver=spec.max_deliver,
        filter_subject=spec.filter_subject,
    )


CONSUMER_SETUP_S = 60.0
"""How long creating a consumer is retried while JetStream does not answer (a cluster still
electing its leaders, a node just killed) before the service gives up and is restarted."""


async def ensure_consumer(js: JetStreamContext, spec: ConsumerSpec) -> None:
    """Create the durable consumer, or update it to spec (a changed ack wait takes effect);
    retried for CONSUMER_SETUP_S while JetStream's API times out or is unavailable."""
    await _retrying(
        lambda: js.add_consumer(spec.stream.name, consumer_config(spec)),
        (TimeoutError, nats.errors.NoRespondersError, nats.js.errors.ServiceUnavailableError),
        CONSUMER_SETUP_S,
        f"consumer {spec.durable}: JetStream did not answer",
    )


async def pull_subscribe(js: JetStreamContext, spec: ConsumerSpec) -> PullSub:
    """Bind to the durable pull consumer described by spec (created or updated first)."""
    await ensure_consumer(js, spec)
    return await js.pull_subscribe_bind(spec.durable, stream=spec.stream.name)


async def publish(js: JetStreamContext, subject: str, message: Message) -> None:
    """Publish a message with its Nats-Msg-Id; raises BusError if JetStream did not store it."""
    try:
        await js.publish(
            subject,
            message.model_dump_json().encode(),
            headers={"Nats-Msg-Id": message.msg_id()},
            timeout=5,
        )
    except (TimeoutError, ConnectionClosedError, nats.errors.Error) as exc:
        raise BusError(f"publish to {subject} failed: {exc}") from exc


async def fetch(sub: PullSub, batch: int, timeout: float) -> list[Msg]:
    """Fetch up to batch messages; [] when none arrived within timeout or NATS is away."""
    try:
        return await sub.fetch(batch, timeout=timeout)
    except TimeoutError:
        return []
    except (ConnectionClosedError, nats.errors.Error) as exc:
        log.warning("nats: fetch failed: %s", exc)
        await asyncio.sleep(0.5)
        return []


async def keep_in_progress(msg: Msg, every: float) -> None:
    """Send in-progress acks every `every` seconds until cancelled (for long work)."""
    while True:
        await asyncio.sleep(every)
        try:
            await msg.in_progress()
        except Exception as exc:  # a lost in-progress ack only risks a redelivery
            log.debug("in_progress failed: %s", exc)


async def accept(msg: Msg, model: type[M], what: str) -> M | None:
    """The message's payload as `model`; one that violates it is terminated (never
    redelivered), logged, and None."""
    try:
        return model.model_validate_json(msg.data)
    except ValidationError as exc:
        log.error("terminating invalid %s message: %s; data=%r", what, exc, msg.data[:200])
        await msg.term()
        return None


async def nak_later(msg: Msg, delay: float) -> None:
    """Have JetStream redeliver the message after `delay` seconds."""
    try:
        await msg.nak(delay=delay)
    except Exception as exc:  # redelivery after ack_wait covers a lost nak
        log.warning("nak failed: %s", exc)


async def hand_back(msg: Msg) -> None:
    """The worker is stopping: the message goes back at once, for another worker (a lost nak
    only delays it to the ack wait)."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(msg.nak(), 2)
