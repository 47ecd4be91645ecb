"""The console's pages and forms (`/admin`). Every form handler calls the same function as
its JSON twin in `services/web/admin.py` (`admin_actions`), so the console, the API and `dla`
send the same writer command. No JavaScript: plain forms, each with the session's CSRF
token, answered with a redirect (303) to the page it came from, or the page again with the
refusal in words and its status code."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from services.web import admin_actions as actions
from services.web import admin_reads
from services.web.admin import tokens_of
from services.web.console import session
from services.web.feeds import feed_reports
from services.web.ratelimit import SlidingWindow
from services.web.routes.actions import client_key, read_fields
from services.web.state import WebState
from services.web.templating import render
from shared import admin_tokens

router = APIRouter(prefix="/admin", include_in_schema=False)
LOGIN_ATTEMPTS = 10
LOGIN_WINDOW_SECONDS = 300
"""At most LOGIN_ATTEMPTS failed logins per client address per window (each web process)."""
DISABLED = "The admin console is disabled: no ADMIN_TOKEN or ADMIN_TOKENS is set."
DONE = {
    "takedown": "Link {id} is taken down: hidden from every page now; what was captured of it"
    " is kept until its undo window ends (below, once the writer has applied it).",
    "undo": "The undo of link {id} was sent: the link is shown again as soon as the writer"
    " applies it.",
    "exclude": "The exclusion was sent: links of that domain are no longer captured.",
    "include": "The exclusion was lifted: links of that domain are captured again from now on"
    " (retry the failed ones from the queue page).",
    "retry": "The retry was sent: the failed links are queued again.",
    "check": "A check of link {id}'s original was asked for.",
}
"""What a successful form says on the page it returns to (fixed words: nothing echoed)."""


def _state(request: Request) -> WebState:
    state: WebState = request.app.state.web
    return state


def _login_limit(request: Request) -> SlidingWindow:
    found = getattr(request.app.state, "console_logins", None)
    if found is None:
        found = SlidingWindow(LOGIN_ATTEMPTS, LOGIN_WINDOW_SECONDS)
        request.app.state.console_logins = found
    return found


def _session(request: Request) -> session.Session | Response:
    """The request's console session, or the answer to give instead (403 when the console
    is off, a redirect to the login form when not logged in)."""
    tokens = tokens_of(request)
    if not tokens:
        raise HTTPException(403, DISABLED)
    cookie = request.cookies.get(session.COOKIE, "")
    found = session.verify(cookie, tokens, time.time())
    if found is None:
        where = "/admin/login?expired=1" if cookie else "/admin/login"
        return RedirectResponse(where, status_code=303)
    return found


def _page(
    request: Request,
    s: session.Session,
    name: str,
    context: dict[str, Any],
    status: int = 200,
) -> Response:
    done = request.query_params.get("done", "")
    ident = request.query_params.get("id", "")
    message = DONE[done].format(id=int(ident) if ident.isdigit() else "") if done in DONE else ""
    base = {
        "admin": s.name,
        "csrf": session.csrf_token(s, tokens_of(request)),
        "message": message,
        "error": None,
        "section": name,
    }
    headers = {"cache-control": "no-store"}
    return render(request, f"console/{name}.html", base | context, status, headers)


def left(seconds: int) -> str:
    """A time left in words: `6 days 23 h`, `5 h 10 min`, `40 min`."""
    days, rest = divmod(max(seconds, 0), 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    if days:
        return f"{days} day{'s' * (days != 1)} {hours} h"
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


async def _queue_context(state: WebState) -> dict[str, Any]:
    now = datetime.now(UTC)
    return {
        "summary": await actions.read(state, admin_reads.queue, now),
        "domains": await actions.read(state, admin_reads.by_domain, 200, now),
        "running": await actions.read(state, admin_reads.jobs, "running"),
        "waiting": await actions.read(state, admin_reads.jobs, "queued"),
        "feeds": await feed_reports(state),
        "report": None,
    }


async def _takedowns_context(state: WebState) -> dict[str, Any]:
    now = datetime.now(UTC)
    return {
        "takedowns": await actions.read(state, admin_reads.takedowns, now),
        "exclusions": await actions.read(state, admin_reads.exclusions),
        "left": left,
    }


async def _failures_context(state: WebState) -> dict[str, Any]:
    return {"failures": await actions.read(state, admin_reads.failures_by_code)}


async def _liveness_context(state: WebState) -> dict[str, Any]:
    return {"pending": await actions.read(state, admin_reads.awaiting_confirmation)}


PAGES: dict[str, Callable[[WebState], Awaitable[dict[str, Any]]]] = {
    "queue": _queue_context,
    "failures": _failures_context,
    "takedowns": _takedowns_context,
    "liveness": _liveness_context,
}


async def _show(request: Request, name: str) -> Response:
    s = _session(request)
    if isinstance(s, Response):
        return s
    return _page(request, s, name, await PAGES[name](_state(request)))


def _page_route(name: str) -> Callable[[Request], Awaitable[Response]]:
    async def show(request: Request) -> Response:
        return await _show(request, name)

    return show


PAGE_PATHS = {
    "": ("queue", "Jobs running, waiting and failed by domain, with retry; topic backfill."),
    "/failures": ("failures", "Failed captures by error code and hook."),
    "/takedowns": ("takedowns", "Takedowns (undo while the window is open) and exclusions."),
    "/liveness": ("liveness", "Liveness verdicts waiting for confirmation."),
}
"""The console's pages drawn from PAGES: path, page, what it shows."""
for _path, (_name, _doc) in PAGE_PATHS.items():
    router.add_api_route(_path, _page_route(_name), methods=["GET"], description=_doc)


@router.get("/audit")
async def console_audit(request: Request) -> Response:
    """The audit trail, newest first, with its exports."""
    s = _session(request)
    if isinstance(s, Response):
        return s
    given = request.query_params.get("before", "")
    before = int(given) if given.isdigit() and 0 < int(given) < 2**62 else None
    rows = await actions.read(_state(request), _audit_page, before)
    return _page(request, s, "audit", {"entries": rows, "page_size": AUDIT_PAGE})


AUDIT_PAGE = 100


def _audit_page(conn: Any, before: int | None) -> list[dict[str, Any]]:
    return admin_reads.audit(conn, before=before, limit=AUDIT_PAGE)


@router.get("/login")
async def login_form(request: Request) -> Response:
    """The login form (the token goes in the POST body, never in a URL)."""
    if not tokens_of(request):
        raise HTTPException(403, DISABLED)
    note = "Your session expired; log in again." if request.query_params.get("expired") else ""
    if request.query_params.get("out"):
        note = "You are logged out."
    return _login(request, note, None, 200)


def _login(request: Request, note: str, error: str | None, status: int) -> Response:
    headers = {"cache-control": "no-store"}
    context = {"note": note, "error": error}
    return render(request, "console/login.html", context, status, headers)


@router.post("/login")
async def login(request: Request) -> Response:
    """Check the token; on success a session cookie (HttpOnly, SameSite=Strict, Path=/admin,
    Secure over https) that names the token, never holds it."""
    tokens = tokens_of(request)
    if not tokens:
        raise HTTPException(403, DISABLED)
    fields = await read_fields(request)
    who = client_key(request)
    limiter = _login_limit(request)
    wait = limiter.check(who)  # counts this attempt; a success is not counted (undo)
    if wait:
        error = f"Too many wrong tokens from your address; try again in {wait} s."
        response = _login(request, "", error, 429)
        response.headers["retry-after"] = str(wait)
        return response
    name = admin_tokens.name_of(tokens, fields.get("token", "").strip())
    if name is None:
        return _login(request, "", "That is not a valid admin token.", 401)
    limiter.undo(who)
    response = RedirectResponse("/admin", status_code=303)
    response.set_cookie(
        session.COOKIE,
        session.issue(name, tokens[name], time.time()),
        max_age=session.SESSION_SECONDS,
        path=session.PATH,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


async def _form(request: Request) -> tuple[session.Session, dict[str, str]] | Response:
    """A POSTed form of a logged-in session whose CSRF token is right (else the answer)."""
    s = _session(request)
    if isinstance(s, Response):
        return s
    fields = await read_fields(request)
    if not session.csrf_ok(s, tokens_of(request), fields.get("csrf", "")):
        raise HTTPException(
            403,
            "This form is stale or did not come from this console (CSRF check failed):"
            " reload the page and try again.",
        )
    return s, fields


@router.post("/logout")
async def logout(request: Request) -> Response:
    """End the session (the cookie is deleted)."""
    got = await _form(request)
    if isinstance(got, Response):
        return got
    response = RedirectResponse("/admin/login?out=1", status_code=303)
    response.delete_cookie(session.COOKIE, path=session.PATH)
    return response


def _link_id(fields: dict[str, str], name: str = "link_id") -> int:
    given = fields.get(name, "").strip()
    if not given.isdigit() or not 0 < int(given) < 2**62:
        raise HTTPException(400, "give the link's id (a number, as on its page: /links/<id>)")
    return int(given)


async def _act(
    request: Request,
    page: str,
    action: Callable[[WebState, str, dict[str, str]], Awaitable[str]],
) -> Response:
    """Run one form's action; redirect to its page, or show the page with the refusal."""
    got = await _form(request)
    if isinstance(got, Response):
        return got
    s, fields = got
    state = _state(request)
    try:
        done = await action(state, s.name, fields)
    except HTTPException as exc:
        context = await PAGES[page](state)
        context["error"] = str(exc.detail)
        return _page(request, s, page, context, exc.status_code)
    path = "/admin" if page == "queue" else f"/admin/{page}"
    return RedirectResponse(f"{path}?{done}", status_code=303)


async def _take_down(state: WebState, admin: str, fields: dict[str, str]) -> str:
    link_id = _link_id(fields)
    await actions.take_down(state, link_id, fields.get("reason", "")[:2000], admin)
    return f"done=takedown&id={link_id}"


async def _undo(state: WebState, admin: str, fields: dict[str, str]) -> str:
    link_id = _link_id(fields)
    await actions.undo_takedown(state, link_id, fields.get("reason", "")[:2000], admin)
    return f"done=undo&id={link_id}"


async def _exclude(state: WebState, admin: str, fields: dict[str, str]) -> str:
    domain = fields.get("domain", "")[:253]
    await actions.exclude(state, domain, fields.get("reason", "")[:2000], admin)
    return "done=exclude"


async def _include(state: WebState, admin: str, fields: dict[str, str]) -> str:
    domain = fields.get("domain", "")[:253]
    await actions.include(state, domain, fields.get("reason", "")[:2000], admin)
    return "done=include"


async def _retry(state: WebState, admin: str, fields: dict[str, str]) -> str:
    await actions.retry(state, fields.get("domain", "")[:253] or None, None, admin)
    return "done=retry"


async def _check(state: WebState, admin: str, fields: dict[str, str]) -> str:
    cmd = await actions.check_now(state, fields.get("link", "")[:8192])
    return f"done=check&id={cmd.link_id}"


FORMS: dict[str, tuple[str, Callable[[WebState, str, dict[str, str]], Awaitable[str]], str]] = {
    "/takedowns/takedown": ("takedowns", _take_down, "Take a link down (`dla takedown`)."),
    "/takedowns/undo": ("takedowns", _undo, "Undo a takedown in its window (`dla undo`)."),
    "/takedowns/exclude": ("takedowns", _exclude, "Exclude a domain (`dla exclude`)."),
    "/takedowns/include": ("takedowns", _include, "Lift an exclusion (`dla include`)."),
    "/queue/retry": ("queue", _retry, "Queue failed links again (`dla retry [--domain]`)."),
    "/liveness/check": ("liveness", _check, "Check a link's original now (`dla check`)."),
}
"""The console's action forms: path, the page they return to, what they do, its `dla` twin."""


def _form_route(
    page: str, action: Callable[[WebState, str, dict[str, str]], Awaitable[str]]
) -> Callable[[Request], Awaitable[Response]]:
    async def handle(request: Request) -> Response:
        return await _act(request, page, action)

    return handle


for _path, (_back_to, _action, _doc) in FORMS.items():
    router.add_api_route(_path, _form_route(_back_to, _action), methods=["POST"], description=_doc)


@router.post("/queue/backfill")
async def form_backfill(request: Request) -> Response:
    """Read a whole topic now (`dla backfill TOPIC_URL`); the poller's report is shown."""
    got = await _form(request)
    if isinstance(got, Response):
        return got
    s, fields = got
    state = _state(request)
    context = await _queue_context(state)
    try:
        report = await actions.backfill(
            state, fields.get("topic_url", "")[:8192], actions.CONSOLE_BACKFILL_SECONDS
        )
    except HTTPException as exc:
        context["error"] = str(exc.detail)
        return _page(request, s, "queue", context, exc.status_code)
    context["report"] = report
    return _page(request, s, "queue", context, 400 if report.error else 200)
