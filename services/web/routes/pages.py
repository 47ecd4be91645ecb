"""Read pages and their JSON twins: home, link, search, stats, submissions."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request
from fastapi.responses import Response

from services.web import serialize
from services.web.compare import comparable, edited
from services.web.errors import SafeJSONResponse
from services.web.params import (
    LIMIT_MAX,
    MAX_ID,
    check_request_id,
    encode_cursor,
    parse_cursor,
    parse_day,
)
from services.web.posts import post_view
from services.web.present import snapshot_wall
from services.web.queries import links as link_queries
from services.web.queries import stats as stats_queries
from services.web.queries import submissions as submission_queries
from services.web.queries.links import no_rows
from services.web.queries.search import (
    SOURCE_STATES,
    Filters,
    SearchPage,
    Sort,
    search,
)
from services.web.reader import reader_view
from services.web.routes.replay import replay_path
from services.web.state import WebState, web_state
from services.web.templating import render

router = APIRouter()


def json_response(body: dict[str, Any]) -> Response:
    """A JSON twin's answer, encoded directly (the rows are plain JSON types already)."""
    return SafeJSONResponse(body)


State = Annotated[WebState, Depends(web_state)]
Limit = Annotated[int, Query(ge=1, le=LIMIT_MAX, description="Links per page (1-1000).")]
CursorParam = Annotated[
    str | None, Query(max_length=200, description="`next` of the previous page.")
]
LinkId = Annotated[int, Path(ge=1, le=MAX_ID, description="The link's id.")]
ForumParam = Annotated[
    str,
    Query(
        max_length=300,
        description="Only links posted on this forum: its host (with the port when not the"
        ' default), as each "where posted" line names it.',
    ),
]
STATUSES = ("archived", "failed", "partial")
STATS_TTL = 10.0


async def _recent(state: WebState, limit: int, cursor: str | None, forum: str) -> dict[str, Any]:
    at = parse_cursor(cursor)
    only = forum.strip().lower() or None
    rows = await state.db.read(lambda c: link_queries.recent(c, limit, at, only), no_rows())
    nxt = None
    if len(rows) > limit:
        rows = rows[:limit]
        nxt = encode_cursor(rows[-1]["listed_at"], rows[-1]["id"])
    return {"rows": rows, "next": nxt}


@router.get("/", include_in_schema=False)
async def index(
    request: Request,
    state: State,
    limit: Limit = 50,
    cursor: CursorParam = None,
    forum: ForumParam = "",
) -> Response:
    page = await _recent(state, limit, cursor, forum)
    context = {"links": page["rows"], "next": page["next"], "limit": limit}
    return render(
        request, "index.html", context | {"first": cursor is None, "forum": forum.strip().lower()}
    )


@router.get("/index.json", summary="Newest archives first")
async def index_json(
    state: State, limit: Limit = 50, cursor: CursorParam = None, forum: ForumParam = ""
) -> Response:
    """Listed links, newest archive first; `next` is the cursor of the following page (with
    `forum`, of the links posted on that forum)."""
    page = await _recent(state, limit, cursor, forum)
    return json_response(
        {"links": [serialize.link_summary(r) for r in page["rows"]], "next": page["next"]}
    )


async def _link(state: WebState, link_id: int) -> dict[str, Any]:
    link = await state.db.read(lambda c: link_queries.detail(c, link_id), None)
    if link is None:
        raise HTTPException(404, f"no link {link_id}")
    return link


@router.get("/links/{link_id}.json", summary="Everything about one link")
async def link_json(state: State, link_id: LinkId) -> Response:
    """URLs, aliases, metadata, provenance, every snapshot and attempt, artifacts; and
    `replay_url`, the page that replays its newest public WACZ (null: none, or no replay)."""
    link = await _link(state, link_id)
    return json_response(serialize.link_detail(link) | {"replay_url": replay_path(state, link)})


@router.get("/links/{link_id}", include_in_schema=False)
async def link_page(request: Request, state: State, link_id: LinkId) -> Response:
    link = await _link(state, link_id)
    reader = await reader_view(state, link)
    screenshot = next((a for a in reversed(link["artifacts"]) if a["kind"] == "screenshot"), None)
    shot_of = next(
        (s for s in link["snapshots"] if screenshot and s["id"] == screenshot["snapshot_id"]), None
    )
    return render(
        request,
        "link.html",
        {
            "link": link,
            "post": post_view(link.get("post"), link["artifacts"]),
            "reader": reader,
            "screenshot": screenshot,
            "wall": snapshot_wall(shot_of),
            "admin": state.settings.admin_token is not None,
            "source": link["source_status"],
            "captures": comparable(link),
            "edited": edited(link),
            "replay_path": replay_path(state, link),
        },
    )


SORTS: dict[str, Sort] = {"newest": "newest", "relevance": "relevance"}
VIDEO_CHOICES = {
    "": None,
    "1": True,
    "yes": True,
    "on": True,
    "true": True,
    "0": False,
    "no": False,
    "false": False,
}


@dataclass(frozen=True)
class SearchParams:
    """The search form's fields, validated."""

    q: str
    sort: Sort
    limit: int
    cursor: int | None
    filters: Filters
    form: dict[str, str]
    """What the person typed (the form shows it again)."""


async def search_params(
    q: Annotated[
        str, Query(max_length=500, description="Words to find (plain words; no syntax).")
    ] = "",
    domain: Annotated[
        str, Query(max_length=253, description="Only this domain (and its subdomains).")
    ] = "",
    status: Annotated[str, Query(max_length=20, description="archived, failed or partial.")] = "",
    has_video: Annotated[str, Query(max_length=5, description="yes/no (or 1/0, on).")] = "",
    since: Annotated[
        str, Query(max_length=10, description="Archived on or after (YYYY-MM-DD).")
    ] = "",
    until: Annotated[
        str, Query(max_length=10, description="Archived on or before (YYYY-MM-DD).")
    ] = "",
    source_status: Annotated[
        str,
        Query(
            max_length=10,
            description="present, gone or unknown: what the last checks of the original found"
            " (links checked at least once). Without words: every such link, newest first.",
        ),
    ] = "",
    forum: ForumParam = "",
    sort: Annotated[str, Query(max_length=10, description="newest (default) or relevance.")] = (
        "newest"
    ),
    limit: Annotated[int, Query(ge=1, le=100, description="Results per page (1-100).")] = 20,
    cursor: Annotated[str, Query(max_length=40, description="`next` of the previous page.")] = "",
) -> SearchParams:
    """The search form's fields (async: FastAPI runs a plain function or class dependency in
    its thread pool, a thread hop per request for a few microseconds of checks)."""
    if status and status not in STATUSES:
        raise HTTPException(400, f"status: one of {', '.join(STATUSES)}")
    order = SORTS.get(sort)
    if order is None:
        raise HTTPException(400, "sort: newest or relevance")
    if has_video.lower() not in VIDEO_CHOICES:
        raise HTTPException(400, "has_video: yes or no")
    if source_status and source_status not in SOURCE_STATES:
        raise HTTPException(400, f"source_status: one of {', '.join(SOURCE_STATES)}")
    if cursor and (not cursor.isdigit() or int(cursor) > MAX_ID):
        raise HTTPException(400, "cursor: not a cursor this site gave out")
    filters = Filters(
        domain=domain.strip().lower() or None,
        status=status or None,
        has_video=VIDEO_CHOICES[has_video.lower()],
        since=parse_day("since", since),
        until=parse_day("until", until),
        source_status=source_status or None,
        forum=forum.strip().lower() or None,
    )
    form = {"q": q, "domain": domain, "status": status, "has_video": has_video, "forum": forum}
    form |= {"since": since, "until": until, "source_status": source_status, "sort": sort}
    return SearchParams(q.strip(), order, limit, int(cursor) if cursor else None, filters, form)


Search = Annotated[SearchParams, Depends(search_params)]


async def _search(state: WebState, p: SearchParams, *, artifacts: bool = False) -> SearchPage:
    if p.sort == "relevance" and p.cursor is not None and p.cursor > 10_000:
        raise HTTPException(400, "cursor: relevance pages stop at 10000 results")
    relevance = p.sort == "relevance"
    return await state.db.read(
        lambda c: search(
            c,
            p.q,
            p.filters,
            limit=p.limit,
            sort=p.sort,
            cursor=None if relevance else p.cursor,
            offset=(p.cursor or 0) if relevance else 0,
            artifacts=artifacts,
            older=True,
        ),
        SearchPage([], 0, False, None),
    )


@router.get("/search.json", summary="Full-text search")
async def search_json(state: State, p: Search) -> Response:
    """FTS over title, URL and archived text; every word must match. The first page also
    lists `older_captures`: links only an older capture of which holds the words."""
    page = await _search(state, p)
    return json_response(
        {
            "results": [serialize.search_hit(r) for r in page.results],
            "total": page.total,
            "total_capped": page.total_capped,
            "next": None if page.next is None else str(page.next),
            "older_captures": [serialize.older_hit(r) for r in page.older],
        }
    )


@router.get("/search", include_in_schema=False)
async def search_page(request: Request, state: State, p: Search) -> Response:
    asked = p.q or p.filters.source_status or p.filters.forum
    page = await _search(state, p, artifacts=True) if asked else None
    older = page.older if page else []
    context = {"p": p, "page": page, "older": older, "statuses": STATUSES}
    return render(request, "search.html", context | {"source_states": SOURCE_STATES})


async def _stats(state: WebState) -> dict[str, Any]:
    cached = state.cache.get("stats")
    if cached and time.monotonic() - cached[0] < STATS_TTL:
        return cached[1]  # type: ignore[return-value]
    empty = {
        "links": {"total": 0, "by_status": {}, "declined": 0},
        "domains": [],
        "failures": [],
        "backlog": {"queued": 0, "running": 0, "oldest_queued_at": None},
        "gone_by_platform": {},
    }
    data = await state.db.read(stats_queries.stats, empty)
    state.cache["stats"] = (time.monotonic(), data)
    return data


@router.get("/stats.json", summary="Counts, failures by error code, backlog, gone originals")
async def stats_json(state: State) -> Response:
    """Links by status, the top domains, failed hook runs by error code, the job backlog,
    links whose originals are gone by platform."""
    return json_response(await _stats(state))


@router.get("/stats", include_in_schema=False)
async def stats_page(request: Request, state: State) -> Response:
    return render(request, "stats.html", {"stats": await _stats(state)})


async def _submission(state: WebState, request_id: str) -> dict[str, Any]:
    rid = check_request_id(request_id)
    row = await state.db.read(lambda c: submission_queries.submission(c, rid), None)
    if row is None:
        return {
            "request_id": rid,
            "state": "pending",
            "decision": None,
            "reason": "not decided yet (the writer has not seen it, or no such request)",
        }
    return serialize.submission(row)


@router.get("/submissions/{request_id}.json", summary="What became of a request")
async def submission_json(state: State, request_id: str) -> Response:
    """The policy decision, link id, job state and attempts of a submit/re-archive request."""
    return json_response(await _submission(state, request_id))


@router.get("/submissions/{request_id}", include_in_schema=False)
async def submission_page(request: Request, state: State, request_id: str) -> Response:
    sub = await _submission(state, request_id)
    return render(request, "submission.html", {"sub": sub})
