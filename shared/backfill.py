"""Asking for a whole topic to be read (`dla backfill`, and any admin page later): the one
call every asker makes. The poller does the reading (its HTTP client, limits and forums);
the asker needs NATS only, never the forum."""

from __future__ import annotations

import nats.errors
from nats.aio.client import Client
from pydantic import ValidationError

from shared.discourse import parse_topic_url
from shared.errors import BusError
from shared.messages import BackfillReport, BackfillRequest
from shared.subjects import POLLER_BACKFILL


async def request_backfill(nc: Client, topic_url: str, timeout: float) -> BackfillReport:
    """Ask the poller to read the topic and publish its posts; its report (``error`` set
    when it read nothing). Raises NotATopic before asking anything for a URL that names no
    topic, and BusError when no poller answers within ``timeout`` seconds."""
    parse_topic_url(topic_url)
    body = BackfillRequest(topic_url=topic_url).model_dump_json().encode()
    try:
        reply = await nc.request(POLLER_BACKFILL, body, timeout=timeout)
    except nats.errors.NoRespondersError:
        raise BusError("no poller is running to read the topic (is `dla up` running?)") from None
    except TimeoutError:
        raise BusError(
            f"the poller did not answer within {timeout:.0f} s (a long topic: it goes on"
            " reading; run the same command again later, nothing is recorded twice)"
        ) from None
    try:
        return BackfillReport.model_validate_json(reply.data)
    except ValidationError as exc:
        raise BusError(f"the poller answered something unreadable: {exc}"[:300]) from None
