"""The public UI: every HTML page has a JSON twin; artifacts are served from S3, never inline."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from nats.aio.client import Client

from services.web import queries
from services.web.settings import WebSettings
from shared import bus
from shared.errors import BusError
from shared.messages import SubmitCommand
from shared.observability import metrics_endpoint
from shared.s3 import ObjectStore
from shared.subjects import CMD_SUBMIT

log = logging.getLogger(__name__)
TEMPLATES = Jinja2Templates(directory=Path(__file__).parent / "templates")
CSP = (
    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "frame-ancestors 'none'"
)


class WebState:
    """Connections the web app holds: NATS (for commands) and S3 (for download links)."""

    def __init__(self, settings: WebSettings) -> None:
        self.settings = settings
        self.nc: Client | None = None
        self.store: ObjectStore | None = None
        """The bucket as the services reach it (health checks)."""
        self.signer: ObjectStore | None = None
        """Signs artifact links for the address browsers use (S3_PUBLIC_ENDPOINT, if set)."""

    def read(self) -> Any:
        """A read-only database connection (or None before the writer created the file)."""
        return queries.connect_readonly(self.settings.db_path)


def create_app(settings: WebSettings) -> FastAPI:
    """Build the app for these settings."""
    state = WebState(settings)

    async def connect_nats() -> None:
        try:
            state.nc = await bus.connect(settings.nats_url, "web", connect_timeout=3600)
        except BusError as exc:
            log.error("web: no NATS, submissions disabled: %s", exc)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        connecting = asyncio.create_task(connect_nats())
        public = settings.s3_public_endpoint
        async with contextlib.AsyncExitStack() as stack:
            state.store = await stack.enter_async_context(ObjectStore(settings))
            state.signer = state.store
            if public:
                signing = settings.model_copy(update={"s3_endpoint": public})
                state.signer = await stack.enter_async_context(ObjectStore(signing))
            yield
        connecting.cancel()
        if state.nc is not None:
            await state.nc.drain()

    app = FastAPI(title="Discourse Link Archiver", lifespan=lifespan, docs_url="/api/docs")

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        response.headers.setdefault("Content-Security-Policy", CSP)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        return response

    def links() -> list[dict[str, Any]]:
        conn = state.read()
        if conn is None:
            return []
        with contextlib.closing(conn):
            return queries.recent_links(conn)

    @app.get("/", response_class=HTMLResponse)
    async def index(request: Request) -> Response:
        data = await asyncio.to_thread(links)
        return TEMPLATES.TemplateResponse(request, "index.html", {"links": data})

    @app.get("/index.json")
    async def index_json() -> dict[str, Any]:
        return {"links": await asyncio.to_thread(links)}

    @app.get("/artifacts/{artifact_id}")
    async def artifact(artifact_id: int) -> Response:
        def key() -> str | None:
            conn = state.read()
            if conn is None:
                return None
            with contextlib.closing(conn):
                return queries.artifact_key(conn, artifact_id)

        s3_key = await asyncio.to_thread(key)
        if s3_key is None or state.signer is None:
            raise HTTPException(404, "no such artifact")
        url = await state.signer.presigned_get(s3_key, settings.presign_seconds)
        return RedirectResponse(url, status_code=302)

    @app.post("/submit", status_code=202)
    async def submit(request: Request) -> Response:
        if request.headers.get("content-type", "").startswith("application/json"):
            url = str((await request.json()).get("url", ""))
        else:
            url = str((await request.form()).get("url", ""))
        url = url.strip()
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname or len(url) > 4096:
            raise HTTPException(400, "give an http(s) URL")
        if state.nc is None or not state.nc.is_connected:
            raise HTTPException(503, "the archive cannot take submissions right now")
        cmd = SubmitCommand(url=url, request_id=uuid.uuid4().hex, requested_at=datetime.now(UTC))
        try:
            await bus.publish(state.nc.jetstream(), CMD_SUBMIT, cmd)
        except BusError as exc:
            raise HTTPException(503, "the archive cannot take submissions right now") from exc
        body = {"request_id": cmd.request_id, "url": url, "status": "accepted"}
        if "text/html" in request.headers.get("accept", ""):
            return RedirectResponse("/", status_code=303)
        return JSONResponse(body, status_code=202)

    @app.get("/healthz")
    async def healthz() -> Response:
        db_ok = settings.db_path.exists()
        nats_ok = state.nc is not None and state.nc.is_connected
        s3_ok = True
        try:
            if state.store is not None:
                await state.store.client.head_bucket(Bucket=state.store.bucket)
        except Exception:
            s3_ok = False
        ok = db_ok and nats_ok and s3_ok
        body = {"service": "web", "ok": ok, "db": db_ok, "nats": nats_ok, "s3": s3_ok}
        return JSONResponse(body, status_code=200 if ok else 503)

    app.add_route("/metrics", metrics_endpoint)
    return app
