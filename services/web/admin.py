"""Admin routes behind named admin tokens: takedown, exclude, retry, re-archive, check the
original now, queue view.

They do what the `dla` subcommands do (the CLI calls them): check the token, publish a
``cmd.*`` command the writer applies (with the token's *name* for the audit table), or read
the queue. With no admin token configured they answer 403: an admin surface is never open.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sqlite3
import uuid
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from services.web.liveness_admin import find_link, liveness_counts
from services.web.routes.actions import publish
from shared import admin_tokens
from shared.links.canonical import RejectedUrl
from shared.links.submission import check_submission
from shared.messages import (
    CheckCommand,
    Command,
    ExcludeCommand,
    RearchiveCommand,
    RetryCommand,
    SubmitCommand,
    TakedownCommand,
)
from shared.subjects import (
    CMD_CHECK,
    CMD_EXCLUDE,
    CMD_REARCHIVE,
    CMD_RETRY,
    CMD_SUBMIT,
    CMD_TAKEDOWN,
)

router = APIRouter(prefix="/admin", tags=["admin"])
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_DOMAIN = re.compile(rf"^(?=.{{1,253}}$)(?:{_LABEL}\.)*{_LABEL}$")


def valid_domain(domain: str) -> bool:
    """True for a host name (IDN allowed, checked in its ASCII form), no scheme/port/path."""
    try:
        ascii_form = domain.encode("idna").decode("ascii")
    except UnicodeError:
        return False
    return bool(_DOMAIN.match(ascii_form))


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


def _tokens(request: Request) -> dict[str, str]:
    cached = getattr(request.app.state, "admin_tokens", None)
    if cached is None:
        cached = AdminSettings().tokens()
        request.app.state.admin_tokens = cached
    return dict(cached)


def admin_name(request: Request) -> str:
    """The name of the admin token of this request (FastAPI dependency), or 401/403."""
    tokens = _tokens(request)
    if not tokens:
        raise HTTPException(403, "admin routes are off: no ADMIN_TOKEN / ADMIN_TOKENS is set")
    given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    name = admin_tokens.name_of(tokens, given) if given else None
    if name is None:
        raise HTTPException(401, "a valid admin token is needed", {"WWW-Authenticate": "Bearer"})
    return name


Admin = Annotated[str, Depends(admin_name)]


class TakedownBody(BaseModel):
    """Body of POST /admin/links/{id}/takedown."""

    model_config = ConfigDict(extra="forbid")
    reason: str = Field(min_length=1, max_length=2000)


class ExcludeBody(BaseModel):
    """Body of POST /admin/exclude."""

    model_config = ConfigDict(extra="forbid")
    domain: str = Field(min_length=1, max_length=253)
    reason: str = Field("", max_length=2000)


class RetryBody(BaseModel):
    """Body of POST /admin/retry: failed links, optionally of one domain or since a time."""

    model_config = ConfigDict(extra="forbid")
    domain: str | None = Field(None, max_length=253)
    since: datetime | None = None


def _state(request: Request) -> Any:
    return request.app.state.web


def _db(request: Request) -> sqlite3.Connection:
    path = _state(request).settings.db_path
    if not path.exists():
        raise HTTPException(503, "the database does not exist yet")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    return conn


def _link_exists(request: Request, link_id: int) -> bool:
    with contextlib.closing(_db(request)) as conn:
        row = conn.execute("SELECT 1 FROM links WHERE id = ?", (link_id,)).fetchone()
    return row is not None


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
    """Hide the link everywhere, delete its objects, never capture it again; audited."""
    if not await asyncio.to_thread(_link_exists, request, link_id):
        raise HTTPException(404, f"no link {link_id}")
    cmd = TakedownCommand(
        link_id=link_id,
        reason=body.reason.strip(),
        admin=admin,
        request_id=uuid.uuid4().hex,
        requested_at=datetime.now(UTC),
    )
    await publish(_state(request), CMD_TAKEDOWN, cmd)
    return _accepted(cmd, link_id=link_id)


@router.post("/exclude", status_code=202, summary="Exclude a domain from archiving")
async def exclude(request: Request, body: ExcludeBody, admin: Admin) -> JSONResponse:
    """Links of this domain (and subdomains) are no longer captured; audited."""
    domain = body.domain.strip().lower().rstrip(".")
    if not valid_domain(domain):
        raise HTTPException(400, f"not a domain name: {body.domain!r}")
    cmd = ExcludeCommand(
        domain=domain,
        reason=body.reason.strip(),
        admin=admin,
        request_id=uuid.uuid4().hex,
        requested_at=datetime.now(UTC),
    )
    await publish(_state(request), CMD_EXCLUDE, cmd)
    return _accepted(cmd, domain=domain)


@router.post("/retry", status_code=202, summary="Capture failed links again")
async def retry(request: Request, body: RetryBody, admin: Admin) -> JSONResponse:
    """Failed links (optionally of one domain, or failed since a time) are queued again."""
    domain = body.domain.strip().lower().rstrip(".") if body.domain else None
    if domain is not None and not valid_domain(domain):
        raise HTTPException(400, f"not a domain name: {body.domain!r}")
    since = body.since
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    cmd = RetryCommand(
        domain=domain,
        since=since,
        admin=admin,
        request_id=uuid.uuid4().hex,
        requested_at=datetime.now(UTC),
    )
    await publish(_state(request), CMD_RETRY, cmd)
    return _accepted(cmd)


@router.post("/links/{link_id}/rearchive", status_code=202, summary="Capture a link again now")
async def rearchive(request: Request, link_id: LinkPath, admin: Admin) -> JSONResponse:
    """A new capture now, whatever the cache window (no rate limit for admins)."""
    if not await asyncio.to_thread(_link_exists, request, link_id):
        raise HTTPException(404, f"no link {link_id}")
    cmd = RearchiveCommand(
        link_id=link_id, request_id=uuid.uuid4().hex, requested_at=datetime.now(UTC)
    )
    await publish(_state(request), CMD_REARCHIVE, cmd)
    return _accepted(cmd, link_id=link_id)


class CheckBody(BaseModel):
    """Body of POST /admin/check: a link's id, or a URL the archive knows."""

    model_config = ConfigDict(extra="forbid")
    link: str = Field(min_length=1, max_length=8192)


def _find_link(request: Request, given: str) -> int | None:
    with contextlib.closing(_db(request)) as conn:
        return find_link(conn, given, _state(request).policy)


@router.post("/check", status_code=202, summary="Check a link's original now")
async def check_now(request: Request, body: CheckBody, _: Admin) -> JSONResponse:
    """A liveness check of the link's original at the writer's next scheduler run (`dla
    check URL|ID`); its answer shows in `/links/{id}.json` `source_status`."""
    link_id = await asyncio.to_thread(_find_link, request, body.link)
    if link_id is None:
        raise HTTPException(404, f"no link {body.link!r} in the archive")
    cmd = CheckCommand(link_id=link_id, request_id=uuid.uuid4().hex, requested_at=datetime.now(UTC))
    await publish(_state(request), CMD_CHECK, cmd)
    return _accepted(cmd, link_id=link_id, requested_at=cmd.requested_at.isoformat())


@router.get("/queue.json", summary="The queue: backlog, throughput, failures, oldest job")
async def queue(request: Request, _: Admin) -> dict[str, Any]:
    """Jobs by status, captures per minute (last 10 min), failures in the last hour by error
    code, the oldest pending job, and the audit trail's latest entries."""
    return await asyncio.to_thread(_queue, request)


def _queue(request: Request) -> dict[str, Any]:
    now = datetime.now(UTC)
    hour_ago = (now - timedelta(hours=1)).isoformat()
    ten_min = (now - timedelta(minutes=10)).isoformat()
    with contextlib.closing(_db(request)) as conn:
        jobs = {
            r["status"]: r["n"]
            for r in conn.execute("SELECT status, count(*) AS n FROM archive_jobs GROUP BY status")
        }
        done = conn.execute(
            "SELECT count(*) FROM archive_jobs WHERE status = 'succeeded' AND finished_at >= ?",
            (ten_min,),
        ).fetchone()[0]
        failures = {
            r["code"]: r["n"]
            for r in conn.execute(
                "SELECT coalesce(error_code, 'unknown') AS code, count(*) AS n"
                " FROM archive_results WHERE status = 'failed' AND updated_at >= ?"
                " GROUP BY code ORDER BY n DESC",
                (hour_ago,),
            )
        }
        oldest = conn.execute(
            "SELECT j.id, j.link_id, l.canonical_url AS url, j.status, j.enqueued_at,"
            " j.attempts FROM archive_jobs j JOIN links l ON l.id = j.link_id"
            " WHERE j.status IN ('queued', 'running') ORDER BY j.enqueued_at, j.id LIMIT 1"
        ).fetchone()
        liveness = liveness_counts(conn, now) if _has_table(conn, "liveness_schedule") else None
        audit = (
            [
                dict(r)
                for r in conn.execute(
                    "SELECT action, target, reason, admin, at FROM admin_audit"
                    " ORDER BY id DESC LIMIT 20"
                )
            ]
            if _has_table(conn, "admin_audit")
            else []
        )
    return {
        "jobs": jobs,
        "captures_per_minute": round(done / 10, 2),
        "failures_last_hour": failures,
        "oldest_pending": dict(oldest) if oldest else None,
        "liveness": liveness,
        "audit": audit,
    }


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
    return row.fetchone() is not None


@router.get("/requests/{request_id}.json", summary="What became of a request")
async def request_outcome(request: Request, request_id: str, _: Admin) -> dict[str, Any]:
    """The writer's decision on a submission / re-archive, its job, the link's status, and
    ``outcome``: ``pending`` (undecided, queued or running), ``captured`` or ``failed``."""
    if not re.fullmatch(r"[0-9a-f]{32}", request_id):
        raise HTTPException(400, "a request id is 32 hex characters")
    found = await asyncio.to_thread(_request_outcome, request, request_id)
    if found is None:
        return {"request_id": request_id, "outcome": "pending", "decision": None}
    return found


def _request_outcome(request: Request, request_id: str) -> dict[str, Any] | None:
    with contextlib.closing(_db(request)) as conn:
        row = conn.execute(
            "SELECT s.request_id, s.kind, s.url, s.link_id, s.job_id, s.decision, s.reason,"
            " j.status AS job_status, j.attempts, j.last_error, l.status AS link_status,"
            " l.canonical_url FROM submissions s"
            " LEFT JOIN archive_jobs j ON j.id = s.job_id"
            " LEFT JOIN links l ON l.id = s.link_id WHERE s.request_id = ?",
            (request_id,),
        ).fetchone()
    if row is None:
        return None
    found = dict(row)
    found["outcome"] = outcome(found)
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
