"""Every capture of a link stays: any two side by side (screenshots) with a word diff of
their texts (`/links/{id}/compare`, and its JSON twin)."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request
from fastapi.responses import Response

from services.web import serialize
from services.web.compare import Comparison, comparable, compare
from services.web.errors import SafeJSONResponse
from services.web.params import MAX_ID
from services.web.queries import links as link_queries
from services.web.state import WebState, web_state
from services.web.templating import render

router = APIRouter()
State = Annotated[WebState, Depends(web_state)]
LinkId = Annotated[int, Path(ge=1, le=MAX_ID, description="The link's id.")]
SnapshotParam = Annotated[
    str, Query(max_length=40, description="A capture's snapshot id (default: see below).")
]
_SNAPSHOT_ID = re.compile(r"[0-9a-f]{32}")


async def _comparison(state: WebState, link_id: int, a: str, b: str) -> tuple[Any, Comparison]:
    """The link and its two captures compared: `a` defaults to the oldest capture, `b` to
    the newest (or, when `a` is the newest, the one before it)."""
    for name, value in (("a", a), ("b", b)):
        if value and not _SNAPSHOT_ID.fullmatch(value):
            raise HTTPException(400, f"{name}: not a snapshot id")
    link = await state.db.read(lambda c: link_queries.detail(c, link_id), None)
    if link is None:
        raise HTTPException(404, f"no link {link_id}")
    captures = comparable(link)
    if len(captures) < 2:
        raise HTTPException(404, f"link {link_id} has fewer than two captures to compare")
    by_id = {s["id"]: s for s in captures}
    for name, value in (("a", a), ("b", b)):
        if value and value not in by_id:
            raise HTTPException(404, f"{name}: no capture {value} of link {link_id}")
    left = by_id[a] if a else captures[-1]
    right = by_id[b] if b else (captures[0] if captures[0] is not left else captures[1])
    return link, await compare(state, left, right)


@router.get("/links/{link_id}/compare.json", summary="Two captures of a link compared")
async def compare_json(
    state: State, link_id: LinkId, a: SnapshotParam = "", b: SnapshotParam = ""
) -> Response:
    """Two captures' screenshots and a word diff of their texts (`a` defaults to the oldest
    capture, `b` to the newest)."""
    _, found = await _comparison(state, link_id, a, b)
    return SafeJSONResponse(serialize.comparison(link_id, found))


@router.get("/links/{link_id}/compare", include_in_schema=False)
async def compare_page(
    request: Request, state: State, link_id: LinkId, a: SnapshotParam = "", b: SnapshotParam = ""
) -> Response:
    link, found = await _comparison(state, link_id, a, b)
    context = {"link": link, "cmp": found, "captures": comparable(link)}
    return render(request, "compare.html", context)
