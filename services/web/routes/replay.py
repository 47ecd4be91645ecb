"""The UI's side of replay: "View as it was" (a redirect to the replay origin's page for the
link's newest public WACZ, ``services/web/replay``), and the viewer's licence and source
(AGPL-3.0)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Request
from fastapi.responses import RedirectResponse, Response

from services.web.params import MAX_ID
from services.web.queries.links import artifacts_by_link, exists_public
from services.web.queries.replayable import newest_replayable
from services.web.replay.site import ReplaySite, licence_file, source_file
from services.web.state import WebState, web_state
from services.web.templating import render

router = APIRouter()
State = Annotated[WebState, Depends(web_state)]
LinkId = Annotated[int, Path(ge=1, le=MAX_ID, description="The link's id.")]


def replay_path(state: WebState, link: dict[str, Any]) -> str | None:
    """The link's "View as it was", when this web replays and the link has a capture to
    replay (see ``queries/replayable.py``)."""
    if state.replay is None or newest_replayable(link["artifacts"]) is None:
        return None
    return f"/links/{link['id']}/replay"


def _site(state: WebState) -> ReplaySite:
    if state.replay is None:
        raise HTTPException(404, "captures are not replayed here")
    return state.replay


@router.get("/links/{link_id}/replay", summary="Replay the link's newest capture")
async def replay_link(state: State, link_id: LinkId) -> Response:
    """303 to the replay origin's page for the link's newest public WACZ (REPLAY_ORIGIN);
    404 when the link has none (a private capture is never replayed) or replay is off."""
    site = _site(state)

    def newest(conn: Any) -> dict[str, Any] | None:
        if not exists_public(conn, link_id):
            return None
        return newest_replayable(artifacts_by_link(conn, [link_id])[link_id])

    wacz = await state.db.read(newest, None)
    if wacz is None:
        raise HTTPException(404, f"link {link_id} has no capture to replay")
    return RedirectResponse(site.view_url(wacz["id"]), 303, {"cache-control": "no-store"})


@router.get("/about/replay", include_in_schema=False)
async def about_replay(request: Request, state: State) -> Response:
    return render(request, "replay_about.html", {"pin": _site(state).pin})


@router.get("/about/replay/LICENSE", summary="The replay viewer's licence (AGPL-3.0)")
async def replay_licence(state: State) -> Response:
    """ReplayWeb.page's LICENSE file, as its package ships it."""
    return licence_file(_site(state))


@router.get("/about/replay/source.tgz", summary="The replay viewer's source (its npm package)")
async def replay_source(state: State) -> Response:
    """The exact npm package the replay viewer's files come from (its `src/` included)."""
    return source_file(_site(state))
