"""Deleting (or quarantining) the S3 objects of taken-down links (everything under the
link's prefix) and of captures of pages that asked not to be archived (their keys), queued
in ``s3_removals``.

The takedown itself is one database transaction; S3 is reached afterwards, from the writer's
housekeeping, so a takedown while S3 is down is recorded at once and its objects go as soon
as S3 answers. A row is only cleared if no late key was added to it meanwhile.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from services.writer import moderation
from services.writer.settings import WriterSettings
from shared.s3 import ObjectStore

log = logging.getLogger(__name__)

WithConn = Callable[..., Awaitable[Any]]
"""Runs fn(connection, *args) on the writer's database thread."""


async def remove_pending(with_conn: WithConn, settings: WriterSettings) -> int:
    """Remove the objects of every queued link; returns how many objects went."""
    rows = await with_conn(moderation.pending_removals)
    if not rows:
        return 0
    removed = 0
    async with ObjectStore(settings) as store:
        for link_id, keys, whole in rows:
            targets = set(json.loads(keys))
            if whole:
                targets |= set(await store.list_keys(f"{settings.s3_prefix}{link_id}/"))
            for key in sorted(targets):
                if whole and settings.takedown_objects == "quarantine":
                    await store.copy(key, f"{settings.quarantine_prefix}{key}")
                await store.delete(key)
                removed += 1
            await with_conn(moderation.removal_done, link_id, keys)
            log.info(
                "%s link %d: %d object(s) %s",
                "taken-down" if whole else "opted-out capture of",
                link_id,
                len(targets),
                "quarantined" if whole and settings.takedown_objects == "quarantine" else "deleted",
            )
    return removed
