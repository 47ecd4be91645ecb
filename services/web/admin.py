"""Admin JSON routes behind named admin tokens: takedown and its undo, exclude, retry,
re-archive, check the original now, queue view, the audit trail and its export.

They do what the `dla` subcommands do (the CLI calls them), through the same functions as
the console's forms (`admin_actions.py`): check the token, publish a ``cmd.*`` command the
writer applies (with the token's *name* for the audit table), or read (`admin_reads.py`).
With no admin token configured they answer 403: an admin surface is never open.
"""

from __future__ import annotations

import re
import sqlite3
import time
import uuid
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from services.web import admin_actions as actions
from services.web import admin_reads
from services.web.console import session
from services.web.feeds import feed_reports
from services.web.present import display_status
from services.web.routes.actions import publish
from services.web.state import WebState
from shared import admin_tokens
from shared.links.canonical import RejectedUrl
from shared.links.submission import check_submission
from shared.messages import Command, SubmitCommand
from shared.subjects import CMD_SUBMIT

router = APIRouter(prefix="/admin", tags=["admin"])


class AdminSettings(BaseSettings):
    """The admin tokens (read by the web's admin routes and the `dla` command)."""

    model_config = SettingsConfigDict(env_prefix="", extra="ignore", case_sensitive=False)

    admin_token: SecretStr | None = Field(None, description="One admin token, named `admin`.")
    admin_tokens: SecretStr | None = Field(
        None, description="Named admin tokens `name:secret,...`; the name goes to the audit."
    )

    def tokens(self) -> dict[str, str]:
        """``{name: secret}``."""
        return admin_tokens.parse(
            self.admin_tokens.get_secret_value() if self.admin_tokens else None,
            self.admin_token.get_secret_value() if self.admin_token else None,
        )


def tokens_of(request: Request) -> dict[str, str]:
    """``{name: secret}`` of the admin tokens (read once per app)."""
    cached = getattr(request.app.state, "admin_tokens", None)
    if cached is None:
        cached = AdminSettings().tokens()
        request.app.state.admin_tokens = cached
    return dict(cached)


def admin_name(request: Request) -> str:
    """The name of the admin token of this request (FastAPI dependency), or 401/403."""
    tokens = tokens_of(request)
    if not tokens:
        raise HTTPException(403, "admin routes are off: no ADMIN_TOKEN / ADMIN_TOKENS is set")
    given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    name = admin_tokens.name_of(tokens, given) if given else None
    if name is None:
        raise HTTPException(401, "a valid admin token is needed", {"WWW-Authenticate": "Bearer"})
    return name


def admin_or_console(request: Request) -> str:
    """The admin's name from the bearer token, or from a console session (for downloads the
    console links to: GET only, never an action)."""
    tokens = tokens_of(request)
    found = session.verify(request.cookies.get(session.COOKIE, ""), tokens, time.time())
    if found is not None and "authorization" not in request.headers:
        return found.name
    return admin_name(request)


Admin = Annotated[str, Depends(admin_name)]
Reader = Annotated[str, Depends(admin_or_console)]


class TakedownBody(BaseModel):
    """Body of POST /admin/links/{id}/takedown."""

    model_config = ConfigDict(extra="forbid")
    reason: str = Field(min_length=1, max_length=2000)


class DomainBody(BaseModel):
    """Body of POST /admin/exclude and POST /admin/include."""

    model_config = ConfigDict(extra="forbid")
    domain: str = Field(min_length=1, max_length=253)
    reason: str = Field("", max_length=2000)


class RetryBody(BaseModel):
    """Body of POST /admin/retry: failed links, optionally of one domain or since a time."""

    model_config = ConfigDict(extra="forbid")
    domain: str | None = Field(None, max_length=253)
    since: datetime | None = None


def _state(request: Request) -> WebState:
    state: WebState = request.app.state.web
    return state


def _accepted(cmd: Command, **extra: Any) -> JSONResponse:
    body = {"request_id": cmd.request_id, "status": "accepted", **extra}
    return JSONResponse(body, status_code=202)


LinkPath = Annotated[int, Field(ge=1, le=2**62)]


class SubmitBody(BaseModel):
    """Body of POST /admin/submit."""

    model_config = ConfigDict(extra="forbid")
    url: str = Field(min_length=1, max_length=8192)


@router.post("/submit", status_code=202, summary="Archive a URL (no per-client limit)")
async def submit(request: Request, body: SubmitBody, _: Admin) -> JSONResponse:
    """What POST /submit does (same checks: canonical form, exclusions), for the owner's
    `dla add`: an admin is not rate-limited per client."""
    checked = check_submission(body.url, _state(request).policy)
    if isinstance(checked, RejectedUrl):
        raise HTTPException(400, f"url: will not be archived ({checked.reason})")
    cmd = SubmitCommand(
        url=body.url.strip(), request_id=uuid.uuid4().hex, requested_at=datetime.now(UTC)
    )
    await publish(_state(request), CMD_SUBMIT, cmd)
    return _accepted(cmd, url=checked.canonical)


@router.post("/links/{link_id}/takedown", status_code=202, summary="Take a link down")
async def takedown(
    request: Request, link_id: LinkPath, body: TakedownBody, admin: Admin
) -> JSONResponse:
    """Hide the link everywhere at once, never capture it again; what was captured is kept
    for TAKEDOWN_UNDO_DAYS (undo), then purged; audited."""
    cmd = await actions.take_down(_state(request), link_id, body.reason, admin)
    return _accepted(cmd, link_id=link_id)


class UndoBody(BaseModel):
    """Body of POST /admin/links/{id}/undo."""

    model_config = ConfigDict(extra="forbid")
    reason: str = Field("", max_length=2000)


@router.post(
    "/links/{link_id}/undo",
    status_code=202,
    summary="Undo a takedown",
    responses={409: {"description": "Not taken down, or its undo window ended (reason given)"}},
)
async def undo(request: Request, link_id: LinkPath, body: UndoBody, admin: Admin) -> JSONResponse:
    """Show a taken-down link again exactly as before, within TAKEDOWN_UNDO_DAYS of its
    takedown; audited. 409 with the reason after the window (or when it is not taken down)."""
    cmd = await actions.undo_takedown(_state(request), link_id, body.reason, admin)
    return _accepted(cmd, link_id=link_id)


@router.post("/exclude", status_code=202, summary="Exclude a domain from archiving")
async def exclude(request: Request, body: DomainBody, admin: Admin) -> JSONResponse:
    """Links of this domain (and subdomains) are no longer captured; audited."""
    cmd = await actions.exclude(_state(request), body.domain, body.reason, admin)
    return _accepted(cmd, domain=cmd.domain)


@router.post(
    "/include",
    status_code=202,
    summary="Lift the exclusion of a domain",
    responses={409: {"description": "No admin excluded this domain (reason given)"}},
)
async def include(request: Request, body: DomainBody, admin: Admin) -> JSONResponse:
    """Links of this domain are captured again from now on (those the exclusion failed stay
    failed: POST /admin/retry with the domain queues them); audited."""
    cmd = await actions.include(_state(request), body.domain, body.reason, admin)
    return _accepted(cmd, domain=cmd.domain)


@router.post("/retry", status_code=202, summary="Capture failed links again")
async def retry(request: Request, body: RetryBody, admin: Admin) -> JSONResponse:
    """Failed links (optionally of one domain, or failed since a time) are queued again."""
    cmd = await actions.retry(_state(request), body.domain, body.since, admin)
    return _accepted(cmd)


@router.post("/links/{link_id}/rearchive", status_code=202, summary="Capture a link again now")
async def rearchive(request: Request, link_id: LinkPath, admin: Admin) -> JSONResponse:
    """A new capture now, whatever the cache window (no rate limit for admins)."""
    cmd = await actions.rearchive(_state(request), link_id)
    return _accepted(cmd, link_id=link_id)


class CheckBody(BaseModel):
    """Body of POST /admin/check: a link's id, or a URL the archive knows."""

    model_config = ConfigDict(extra="forbid")
    link: str = Field(min_length=1, max_length=8192)


@router.post("/check", status_code=202, summary="Check a link's original now")
async def check_now(request: Request, body: CheckBody, _: Admin) -> JSONResponse:
    """A liveness check of the link's original at the writer's next scheduler run (`dla
    check URL|ID`); its answer shows in `/links/{id}.json` `source_status`."""
    cmd = await actions.check_now(_state(request), body.link)
    return _accepted(cmd, link_id=cmd.link_id, requested_at=cmd.requested_at.isoformat())


@router.get("/queue.json", summary="The queue: backlog, throughput, failures, oldest job")
async def queue(request: Request, _: Admin) -> dict[str, Any]:
    """Jobs by status, captures per minute (last 10 min), failures in the last hour by error
    code, the oldest pending job, the audit trail's latest entries, and each watched feed's
    health (`feeds`: null when NATS cannot say)."""
    state = _state(request)
    figures = await actions.read(state, admin_reads.queue, datetime.now(UTC))
    return figures | {"feeds": await feed_reports(state)}


@router.get("/takedowns.json", summary="Takedowns (with their undo window) and exclusions")
async def takedowns(request: Request, _: Admin) -> dict[str, Any]:
    """Every takedown, newest first, with its reason, admin, time and state (`hidden` with
    `purge_after` and `seconds_left` while it can be undone, `undone`, `purged`), and the
    excluded domains with their reason."""
    now = datetime.now(UTC)
    state = _state(request)
    return {
        "takedowns": await actions.read(state, admin_reads.takedowns, now),
        "exclusions": await actions.read(state, admin_reads.exclusions),
    }


@router.get("/audit.json", summary="The audit trail, newest first")
async def audit(
    request: Request,
    _: Reader,
    before: Annotated[int | None, Query(ge=1, le=2**62)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    """Who did what, when and why (`before`: entries older than this id)."""
    rows = await actions.read(_state(request), _audit_page, before, limit)
    return {"entries": rows}


def _audit_page(conn: sqlite3.Connection, before: int | None, limit: int) -> list[Any]:
    return admin_reads.audit(conn, before=before, limit=limit)


@router.get("/audit.{fmt}", summary="The whole audit trail as CSV or JSONL")
async def audit_export(request: Request, fmt: str, _: Reader) -> Response:
    """`/admin/audit.csv` or `/admin/audit.jsonl`: every entry, oldest first, as a download
    (`dla audit --export`)."""
    if fmt not in EXPORT_TYPES:
        raise HTTPException(404, "export as audit.csv or audit.jsonl")
    lines = await actions.read(_state(request), _export_lines, fmt)
    name = f"dla-audit-{datetime.now(UTC):%Y%m%d-%H%M%S}.{fmt}"
    return Response(
        "".join(lines).encode(),
        media_type=EXPORT_TYPES[fmt],
        headers={"content-disposition": f'attachment; filename="{name}"'},
    )


EXPORT_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}


def _export_lines(conn: sqlite3.Connection, fmt: str) -> list[str]:
    return list(admin_reads.audit_export(conn, fmt))


@router.get("/requests/{request_id}.json", summary="What became of a request")
async def request_outcome(request: Request, request_id: str, _: Admin) -> dict[str, Any]:
    """The writer's decision on a submission / re-archive (``reason``: why it decided so), its
    job, the link's status, its label as the UI shows it (``status_label``: 'failed · HTTP
    404') and ``outcome``: ``pending`` (undecided, queued or running), ``captured`` or
    ``failed``."""
    if not re.fullmatch(r"[0-9a-f]{32}", request_id):
        raise HTTPException(400, "a request id is 32 hex characters")
    found = await actions.read(_state(request), _request_outcome, request_id)
    if found is None:
        return {"request_id": request_id, "outcome": "pending", "decision": None}
    return found


def _request_outcome(conn: sqlite3.Connection, request_id: str) -> dict[str, Any] | None:
    row = conn.execute(
        "SELECT s.request_id, s.kind, s.url, s.link_id, s.job_id, s.decision, s.reason,"
        " j.status AS job_status, j.attempts, j.last_error, l.status AS link_status,"
        " l.last_error_code AS error_code, l.canonical_url FROM submissions s"
        " LEFT JOIN archive_jobs j ON j.id = s.job_id"
        " LEFT JOIN links l ON l.id = s.link_id WHERE s.request_id = ?",
        (request_id,),
    ).fetchone()
    if row is None:
        return None
    found = dict(row)
    found["outcome"] = outcome(found)
    found["status_label"] = (
        display_status(found["link_status"], found["error_code"])[0] if found["link_id"] else None
    )
    return found


def outcome(r: dict[str, Any]) -> str:
    """pending / captured / failed, from the decision, the job and the link status."""
    if r["decision"] == "rejected" or r["decision"] == "skipped_policy":
        return "failed"
    job = r.get("job_status")
    if job in ("queued", "running"):
        return "pending"
    link = r.get("link_status")
    if link in ("archived", "partial"):
        return "captured"
    if job == "failed" or link == "failed":
        return "failed"
    if job == "skipped_cached":
        return "captured" if link != "pending" else "pending"
    return "pending" if link in ("pending", "queued", None) else "failed"
