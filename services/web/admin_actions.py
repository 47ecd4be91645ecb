"""The admin's actions, each one function called by both the JSON route (`dla`) and the
console's form: check what can be checked at once, then publish the ``cmd.*`` command the
writer applies (with the admin token's *name*, for the audit), or ask the poller (backfill).
A refusal is an HTTPException with words a person can act on."""

from __future__ import annotations

import asyncio
import contextlib
import re
import sqlite3
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from fastapi import HTTPException

from services.web import admin_reads
from services.web.liveness_admin import find_link
from services.web.routes.actions import publish
from services.web.state import WebState
from shared.backfill import request_backfill
from shared.discourse import NotATopic
from shared.errors import BusError
from shared.links.domains import public_suffix
from shared.messages import (
    BackfillReport,
    CheckCommand,
    ExcludeCommand,
    IncludeCommand,
    RearchiveCommand,
    RetryCommand,
    TakedownCommand,
    UndoTakedownCommand,
)
from shared.subjects import (
    CMD_CHECK,
    CMD_EXCLUDE,
    CMD_INCLUDE,
    CMD_REARCHIVE,
    CMD_RETRY,
    CMD_TAKEDOWN,
    CMD_UNDO,
)
from shared.takedown_undo import undo_refusal
from shared.typed_text import shown

T = TypeVar("T")
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_DOMAIN = re.compile(rf"^(?=.{{1,253}}$)(?:{_LABEL}\.)*{_LABEL}$")
CONSOLE_BACKFILL_SECONDS = 30.0
"""How long the console waits for the poller's report (a longer topic goes on being read)."""


def valid_domain(domain: str) -> bool:
    """True for a host name (IDN allowed, checked in its ASCII form), no scheme/port/path."""
    try:
        ascii_form = domain.encode("idna").decode("ascii")
    except UnicodeError:
        return False
    return bool(_DOMAIN.match(ascii_form))


def domain_of(given: str) -> str:
    """The domain as commands carry it (lower-case, no trailing dot), or 400."""
    domain = given.strip().lower().rstrip(".")
    if not valid_domain(domain):
        raise HTTPException(400, f"not a domain name: {shown(given)}")
    return domain


def _read(state: WebState, fn: Callable[..., T], *args: Any) -> T:
    try:
        conn = admin_reads.open_ro(state.settings.db_path)
    except FileNotFoundError:
        raise HTTPException(503, "the database does not exist yet") from None
    with contextlib.closing(conn):
        return fn(conn, *args)


async def read(state: WebState, fn: Callable[..., T], *args: Any) -> T:
    """fn(read-only connection, *args) in a thread (503 before the database exists)."""
    return await asyncio.to_thread(_read, state, fn, *args)


def _link_exists(conn: sqlite3.Connection, link_id: int) -> bool:
    row = conn.execute("SELECT 1 FROM links WHERE id = ?", (link_id,)).fetchone()
    return row is not None


def _ids() -> dict[str, Any]:
    return {"request_id": uuid.uuid4().hex, "requested_at": datetime.now(UTC)}


async def take_down(state: WebState, link_id: int, reason: str, admin: str) -> TakedownCommand:
    """Hide a link at once (its captures kept for TAKEDOWN_UNDO_DAYS, then purged)."""
    if not reason.strip():
        raise HTTPException(400, "reason: a takedown needs a reason (kept in the audit trail)")
    if not await read(state, _link_exists, link_id):
        raise HTTPException(404, f"no link {link_id}")
    cmd = TakedownCommand(link_id=link_id, reason=reason.strip(), admin=admin, **_ids())
    await publish(state, CMD_TAKEDOWN, cmd)
    return cmd


async def undo_takedown(
    state: WebState, link_id: int, reason: str, admin: str
) -> UndoTakedownCommand:
    """Show a taken-down link again, within its undo window (409 with the reason if not)."""
    try:
        refusal = await read(state, undo_refusal, link_id, datetime.now(UTC))
    except sqlite3.OperationalError:  # a database the writer has not migrated yet
        raise HTTPException(503, "the database is being upgraded; try again shortly") from None
    if refusal is not None:
        raise HTTPException(409, refusal)
    cmd = UndoTakedownCommand(link_id=link_id, reason=reason.strip(), admin=admin, **_ids())
    await publish(state, CMD_UNDO, cmd)
    return cmd


async def exclude(state: WebState, domain: str, reason: str, admin: str) -> ExcludeCommand:
    """Never capture links of this domain (and its subdomains) from now on. A public suffix
    (`com`, `co.uk`) is refused: it would stop every site under it, surely a slip."""
    name = domain_of(domain)
    if public_suffix(name) == name:
        raise HTTPException(
            400,
            f"{name} is a public suffix: excluding it would stop every site under it;"
            f" exclude a site's domain (example.{name})",
        )
    cmd = ExcludeCommand(domain=name, reason=reason.strip(), admin=admin, **_ids())
    await publish(state, CMD_EXCLUDE, cmd)
    return cmd


def _excluded(conn: sqlite3.Connection, domain: str) -> bool:
    row = conn.execute("SELECT 1 FROM excluded_domains WHERE domain = ?", (domain,)).fetchone()
    return row is not None


async def include(state: WebState, domain: str, reason: str, admin: str) -> IncludeCommand:
    """Lift an admin's exclusion of this domain: its links are captured again from now on
    (409 when no admin excluded it: EXCLUDE_DOMAINS is the configuration's)."""
    cmd = IncludeCommand(domain=domain_of(domain), reason=reason.strip(), admin=admin, **_ids())
    if not await read(state, _excluded, cmd.domain):
        raise HTTPException(
            409, f"{cmd.domain} is not excluded by an admin (EXCLUDE_DOMAINS is set in the config)"
        )
    await publish(state, CMD_INCLUDE, cmd)
    return cmd


async def retry(
    state: WebState, domain: str | None, since: datetime | None, admin: str
) -> RetryCommand:
    """Queue failed links again (of one domain, failed since a time, when given)."""
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    cmd = RetryCommand(
        domain=domain_of(domain) if domain else None,
        since=since,
        admin=admin,
        **_ids(),
    )
    await publish(state, CMD_RETRY, cmd)
    return cmd


async def rearchive(state: WebState, link_id: int) -> RearchiveCommand:
    """A new capture of the link now, whatever the cache window."""
    if not await read(state, _link_exists, link_id):
        raise HTTPException(404, f"no link {link_id}")
    cmd = RearchiveCommand(link_id=link_id, **_ids())
    await publish(state, CMD_REARCHIVE, cmd)
    return cmd


async def check_now(state: WebState, link: str) -> CheckCommand:
    """A liveness check of a link's original (its id or a URL the archive knows) now."""
    link_id = await read(state, find_link, link, state.policy)
    if link_id is None:
        raise HTTPException(404, f"no link {shown(link)} in the archive")
    cmd = CheckCommand(link_id=link_id, **_ids())
    await publish(state, CMD_CHECK, cmd)
    return cmd


async def backfill(state: WebState, topic_url: str, timeout: float) -> BackfillReport:
    """Ask the poller to read a whole topic (`dla backfill`); its report, or 400/503."""
    if state.nc is None or not state.nc.is_connected:
        raise HTTPException(503, "the archive cannot take requests right now (no message bus)")
    try:
        return await request_backfill(state.nc, topic_url.strip(), timeout)
    except NotATopic as exc:
        raise HTTPException(400, str(exc)) from None
    except BusError as exc:
        raise HTTPException(503, str(exc)) from None
