"""Declare what the stack needs before its services start: the JetStream streams and the
bucket (waiting up to a minute for a freshly started S3).

`dla up` runs this as its own short process (``python -m services.supervisor.declare``, the
stack's settings in its environment), so the supervisor, which lives as long as the stack,
never imports the NATS and S3 clients; a test's
`Stack` calls `declare` in its own process.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from collections.abc import Mapping

from shared import bus
from shared.errors import StorageError
from shared.logs import setup_logging
from shared.s3 import ObjectStore
from shared.settings import CommonSettings, fields_from_env

log = logging.getLogger(__name__)

S3_WAIT_S = 60.0
"""How long a bucket that cannot be made yet (S3 still starting) is tried again."""


async def declare(env: Mapping[str, str]) -> None:
    """The streams (at NATS_REPLICAS) and the bucket. Raises StorageError when S3 never
    answered, the bus's errors when NATS did not."""
    settings = CommonSettings.model_validate(fields_from_env(env, CommonSettings))
    nc = await bus.connect(settings.nats_url, "dla-supervisor", connect_timeout=30)
    try:
        await bus.ensure_streams(nc.jetstream(), settings.nats_replicas)
    finally:
        await nc.close()
    deadline = time.monotonic() + S3_WAIT_S
    while True:
        try:
            async with ObjectStore(settings) as store:
                await store.ensure_bucket()
            return
        except StorageError as exc:
            if time.monotonic() > deadline:
                raise
            log.info("waiting for S3: %s", exc)
            await asyncio.sleep(0.5)


def main() -> int:
    setup_logging("INFO", "dla")
    try:
        asyncio.run(declare(os.environ))
    except Exception as exc:
        print(f"dla up: cannot declare the streams and the bucket: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
