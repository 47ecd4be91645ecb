"""The public UI and API: every page has a JSON twin; archived bytes never run here.

``create_app`` assembles the routers (``routes/``), the middleware (security headers,
request metrics) and the error handlers. What the app holds lives in ``WebState``; the
connections are opened by ``service.py`` (or by the app's lifespan when run alone).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.staticfiles import StaticFiles

from services.web import admin, errors
from services.web.connections import connect
from services.web.console import routes as console
from services.web.metrics import RequestMetrics
from services.web.replay.app import create_replay_app
from services.web.replay.hosts import ReplayHost
from services.web.replay.origin import host_of
from services.web.routes import actions, captures, files, pages, replay, system
from services.web.security import SecurityHeaders, page_csp
from services.web.settings import WebSettings
from services.web.state import WebState

STATIC = Path(__file__).parent / "static"


def s3_origin(settings: WebSettings) -> str | None:
    """The origin presigned artifact links point at (allowed for images and video)."""
    if settings.artifact_delivery == "proxy":
        return None
    endpoint = settings.s3_public_endpoint or settings.s3_endpoint
    if not endpoint:
        return f"https://{settings.s3_bucket}.s3.amazonaws.com https://s3.amazonaws.com"
    parts = urlsplit(endpoint)
    return f"{parts.scheme}://{parts.netloc}"


def openapi_schema(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI schema as this app answers: invalid input is a 400 with a message (the
    handler in errors.py), not FastAPI's default 422."""
    if app.openapi_schema is None:
        schema = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        for methods in schema.get("paths", {}).values():
            for op in methods.values():
                responses = op.get("responses", {})
                if responses.pop("422", None) is not None:
                    responses.setdefault(
                        "400", {"description": 'Invalid input: {"error": "<what is wrong>"}'}
                    )
        app.openapi_schema = schema
    return app.openapi_schema


def create_app(settings: WebSettings, state: WebState | None = None) -> FastAPI:
    """The app for these settings. Without a given state, the app opens its own
    connections (S3 now, NATS in the background) for as long as it runs."""
    web = state or WebState.of(settings)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if state is not None:
            yield
            return
        async with connect(web):
            yield

    app = FastAPI(
        title="Discourse Link Archiver",
        description="The public archive's pages and their JSON twins. See docs/api.md.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        default_response_class=errors.SafeJSONResponse,
    )
    app.state.web = web
    app.openapi = lambda: openapi_schema(app)  # type: ignore[method-assign]
    app.include_router(pages.router)
    app.include_router(captures.router)
    app.include_router(actions.router)
    app.include_router(files.router)
    app.include_router(system.router)
    app.include_router(replay.router)
    app.include_router(admin.router)
    app.include_router(console.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    errors.install(app)
    app.add_middleware(SecurityHeaders, csp=page_csp(s3_origin(settings)))
    if web.replay is not None:  # outside the UI's headers: the replay origin sends its own
        replay_app = create_replay_app(web, web.replay)
        app.add_middleware(ReplayHost, replay=replay_app, host=host_of(web.replay.origin))
    app.add_middleware(RequestMetrics)
    return app


def freeze_startup_objects() -> None:
    """Just before serving: exempt what start-up built (modules, the app and its routes,
    about 125,000 objects) from the garbage collector's full passes. Each full pass
    scanned them all, 30-65 ms during which the process answered nothing: the long tail
    of the pages' latencies."""
    gc.collect()
    gc.freeze()
