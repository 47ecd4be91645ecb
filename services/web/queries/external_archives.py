"""A link's submissions to the public archives, as the writer last recorded them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, select

from services.web.queries.prepared import Prepared, param
from services.web.queries.schema import external_archives

_OF_LINK = Prepared(
    select(external_archives)
    .where(external_archives.c.link_id == param("link_id"))
    .order_by(external_archives.c.service)
)


def of_link(conn: Connection, link_id: int) -> list[dict[str, Any]]:
    """Each service's submission of the link."""
    return _OF_LINK.rows(conn, link_id=link_id)
