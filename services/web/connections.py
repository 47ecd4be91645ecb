"""The web's outside connections: S3 (artifacts, reader view, health) and NATS (commands).

Neither is needed to serve pages: NATS connects in the background (actions answer 503
until it is there), and S3 calls time out where they are made.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

import nats.errors

from services.web.state import WebState
from shared import bus
from shared.errors import BusError
from shared.s3 import ObjectStore

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def open_storage(state: WebState) -> AsyncIterator[None]:
    """S3 clients for the services' address and for the address browsers use."""
    settings = state.settings
    async with contextlib.AsyncExitStack() as stack:
        state.store = await stack.enter_async_context(ObjectStore(settings))
        state.signer = state.store
        if settings.s3_public_endpoint:
            public = settings.model_copy(update={"s3_endpoint": settings.s3_public_endpoint})
            state.signer = await stack.enter_async_context(ObjectStore(public))
        try:
            yield
        finally:
            state.store = state.signer = None
            state.db.dispose()


@contextlib.asynccontextmanager
async def connect(state: WebState) -> AsyncIterator[None]:
    """S3 now and NATS in the background, for as long as the block runs."""

    async def connect_nats() -> None:
        try:
            nc = await bus.connect(state.settings.nats_url, "web", connect_timeout=86400)
            await bus.ensure_streams(nc.jetstream())
            state.nc = nc
        except (BusError, nats.errors.Error, TimeoutError) as exc:
            log.error("web: no NATS, actions disabled: %s", exc)

    connecting = asyncio.create_task(connect_nats())
    try:
        async with open_storage(state):
            yield
    finally:
        connecting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await connecting
        if state.nc is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(state.nc.close(), 5)
            state.nc = None
