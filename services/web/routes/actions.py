"""Actions people take: submit a URL, re-archive a link. The web decides nothing durable:
it checks what it can at once (same canonicaliser and policy as the writer), then publishes
a command and answers 202 with a status URL."""

from __future__ import annotations

import hmac
import json
import uuid
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from services.web.errors import SafeJSONResponse, wants_html
from services.web.queries.links import exists_public
from services.web.routes.pages import LinkId
from services.web.state import WebState, web_state
from shared import bus
from shared.errors import BusError
from shared.links.canonical import RejectedUrl
from shared.links.submission import check_submission
from shared.messages import Command, RearchiveCommand, SubmitCommand
from shared.subjects import CMD_REARCHIVE, CMD_SUBMIT

router = APIRouter()
State = Annotated[WebState, Depends(web_state)]
MAX_BODY = 16 * 1024
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


async def read_fields(request: Request) -> dict[str, str]:
    """The body's string fields (JSON object or form), or 4xx saying what is wrong with it."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise HTTPException(413, f"body larger than {MAX_BODY} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > MAX_BODY:
            raise HTTPException(413, f"body larger than {MAX_BODY} bytes")
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype == "application/json" or ctype.endswith("+json"):
        try:
            data = json.loads(bytes(body))
        except (ValueError, UnicodeDecodeError):
            raise HTTPException(400, "body is not valid JSON") from None
        if not isinstance(data, dict):
            raise HTTPException(400, 'body must be a JSON object like {"url": "https://..."}')
        return {k: v for k, v in data.items() if isinstance(v, str)}
    if ctype in FORM_TYPES:
        request._body = bytes(body)  # the stream is consumed; form() reads the cached body
        form = await request.form(max_files=0, max_fields=20, max_part_size=MAX_BODY)
        return {k: v for k, v in form.items() if isinstance(v, str)}
    if not body:
        return {}
    raise HTTPException(415, "send JSON (application/json) or a form")


def authorize(request: Request, state: WebState, fields: dict[str, str]) -> None:
    """With ADMIN_TOKEN set, actions need it (Bearer header or `token` field)."""
    token = state.settings.admin_token
    if token is None:
        return
    given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    given = given or fields.get("token", "")
    if not hmac.compare_digest(given.encode("utf-8", "replace"), token.get_secret_value().encode()):
        raise HTTPException(
            401, "this action needs the admin token", {"WWW-Authenticate": "Bearer"}
        )


def client_key(request: Request) -> str:
    """Who is asking (the peer address; put a proxy's X-Forwarded-For handling in front)."""
    return request.client.host if request.client else "unknown"


def limit(window_check: int, what: str) -> None:
    """429 with Retry-After when a rate limit says wait."""
    if window_check:
        raise HTTPException(
            429, f"{what}; try again in {window_check} s", {"Retry-After": str(window_check)}
        )


async def publish(state: WebState, subject: str, cmd: Command) -> None:
    """Publish a command, or 503 if NATS cannot take it now."""
    if state.nc is None or not state.nc.is_connected:
        raise HTTPException(503, "the archive cannot take requests right now (no message bus)")
    try:
        await bus.publish(state.nc.jetstream(), subject, cmd)
    except BusError as exc:
        raise HTTPException(503, "the archive cannot take requests right now") from exc


def accepted(request: Request, request_id: str, extra: dict[str, Any]) -> Response:
    """202 with the request id and status URL (a browser is sent to the status page)."""
    if wants_html(request):
        return RedirectResponse(f"/submissions/{request_id}", status_code=303)
    body = {"request_id": request_id, "status_url": f"/submissions/{request_id}.json", **extra}
    return SafeJSONResponse(body, status_code=202)


@router.post(
    "/submit",
    status_code=202,
    summary="Ask to archive a URL",
    responses={
        400: {"description": "The URL will not be archived (reason given)"},
        429: {"description": "Too many requests (Retry-After)"},
    },
)
async def submit(request: Request, state: State) -> Response:
    """Body: `{"url": "https://..."}` or a form with `url`. Answers 202 with `request_id`
    and `status_url`, or 400 with the reason when the writer would reject the URL."""
    fields = await read_fields(request)
    authorize(request, state, fields)
    url = fields.get("url", "").strip()
    if not url:
        raise HTTPException(400, "url: give the http(s) URL to archive")
    checked = check_submission(url, state.policy)
    if isinstance(checked, RejectedUrl):
        raise HTTPException(400, f"url: will not be archived ({checked.reason})")
    limit(state.per_client.check(client_key(request)), "too many requests from you")
    cmd = SubmitCommand(url=url, request_id=uuid.uuid4().hex, requested_at=datetime.now(UTC))
    try:
        await publish(state, CMD_SUBMIT, cmd)
    except HTTPException:
        state.per_client.undo(client_key(request))
        raise
    return accepted(request, cmd.request_id, {"url": checked.canonical, "status": "accepted"})


@router.post(
    "/links/{link_id}/rearchive",
    status_code=202,
    summary="Capture a link again now",
    responses={
        404: {"description": "No such link"},
        429: {"description": "Asked too often (Retry-After)"},
    },
)
async def rearchive(request: Request, state: State, link_id: LinkId) -> Response:
    """Rate-limited per client and per link. Answers 202 with `request_id` and `status_url`."""
    fields = await read_fields(request)
    authorize(request, state, fields)
    if not await state.db.read(lambda c: exists_public(c, link_id), False):
        raise HTTPException(404, f"no link {link_id}")
    who = client_key(request)
    limit(state.per_client.check(who), "too many requests from you")
    wait = state.per_link.check(str(link_id))
    if wait:
        state.per_client.undo(who)
    limit(wait, f"link {link_id} was just queued for re-archiving")
    cmd = RearchiveCommand(
        link_id=link_id, request_id=uuid.uuid4().hex, requested_at=datetime.now(UTC)
    )
    try:
        await publish(state, CMD_REARCHIVE, cmd)
    except HTTPException:
        state.per_client.undo(who)
        state.per_link.undo(str(link_id))
        raise
    return accepted(request, cmd.request_id, {"link_id": link_id, "status": "accepted"})
