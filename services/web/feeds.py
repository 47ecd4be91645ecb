"""Each watched feed's health for the owner (shared.feed_health), read from NATS: the console's
queue page and `/admin/queue.json` (`dla status`)."""

from __future__ import annotations

from typing import Any

from services.web.state import WebState
from shared import feed_health
from shared.errors import BusError

READ_TIMEOUT_S = 2.0
"""How long the page waits for the reports before it says they are unavailable."""


async def feed_reports(state: WebState) -> list[dict[str, Any]] | None:
    """Every feed's latest report as JSON, failing ones first; None when NATS cannot say."""
    if state.nc is None or not state.nc.is_connected:
        return None
    try:
        reports = await feed_health.read_all(state.nc.jetstream(timeout=READ_TIMEOUT_S))
    except BusError:
        return None
    return [r.model_dump(mode="json") for r in reports]
