"""/healthz (answers within HEALTH_TIMEOUT_SECONDS whatever hangs), /metrics, API docs."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST

from services.web.errors import SafeJSONResponse
from services.web.metrics import exposition
from services.web.queries.stats import queued_jobs
from services.web.state import WebState, web_state
from services.web.templating import render

router = APIRouter()
State = Annotated[WebState, Depends(web_state)]


async def _bounded(check: Any, timeout: float) -> tuple[bool, str]:
    try:
        return True, str(await asyncio.wait_for(check, timeout))
    except TimeoutError:
        return False, f"no answer within {timeout:g} s"
    except Exception as exc:
        return False, type(exc).__name__


@router.get("/healthz", summary="Health: database, S3, NATS, backlog")
async def healthz(state: State) -> Response:
    """200 when the database, S3 and NATS answer; 503 with what is down otherwise."""
    timeout = state.settings.health_timeout_seconds

    async def s3() -> str:
        if state.store is None:
            raise RuntimeError("not configured")
        await state.store.ping()
        return "ok"

    (db_ok, backlog), (s3_ok, s3_detail) = await asyncio.gather(
        _bounded(state.db.read(queued_jobs, -1), timeout), _bounded(s3(), timeout)
    )
    db_ok = db_ok and backlog != "-1"
    nats_ok = state.nc is not None and state.nc.is_connected
    ok = db_ok and s3_ok and nats_ok
    body = {
        "service": "web",
        "ok": ok,
        "db": db_ok,
        "s3": s3_ok,
        "nats": nats_ok,
        "backlog": int(backlog) if db_ok else None,
        "details": {
            "db": "ok" if db_ok else ("no database yet" if backlog == "-1" else backlog),
            "s3": s3_detail,
            "nats": "connected" if nats_ok else "disconnected",
        },
    }
    return SafeJSONResponse(body, status_code=200 if ok else 503)


@router.get("/metrics", include_in_schema=False)
async def metrics() -> Response:
    return Response(exposition(), media_type=CONTENT_TYPE_LATEST)


@router.get("/api/docs", include_in_schema=False)
async def api_docs(request: Request) -> Response:
    """The API reference, rendered here from the OpenAPI schema (no scripts, no CDN)."""
    schema = request.app.openapi()
    ops = []
    for path, methods in schema.get("paths", {}).items():
        for method, op in methods.items():
            ops.append(
                {
                    "path": path,
                    "method": method.upper(),
                    "summary": op.get("summary", ""),
                    "description": op.get("description", ""),
                    "params": op.get("parameters", []),
                    "responses": op.get("responses", {}),
                }
            )
    return render(request, "api.html", {"ops": ops})
