"""Fixtures of the web tests: a filled archive, settings, in-process clients."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from services.supervisor.children import free_ports
from services.web.app import create_app
from services.web.settings import WebSettings
from services.web.state import WebState
from tests.web.archive import build


def web_settings(data_dir: Path, **extra: object) -> WebSettings:
    """Settings whose S3 and NATS point at ports nobody listens on (unless overridden)."""
    dead_s3, dead_nats = free_ports(2)
    return WebSettings.model_validate(
        {
            "data_dir": data_dir,
            "s3_endpoint": f"http://127.0.0.1:{dead_s3}",
            "nats_url": f"nats://127.0.0.1:{dead_nats}",
            "aws_access_key_id": "k",
            "aws_secret_access_key": "s",
            **extra,
        }
    )


def client_for(state: WebState) -> httpx.AsyncClient:
    """An in-process client (httpx ASGI transport) of an app over this state."""
    app = create_app(state.settings, state)
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://archive.test", timeout=10
    )


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir whose database holds tests/web/archive.py's links (shared by a module's
    tests: the web only reads it)."""
    data = tmp_path_factory.mktemp("web")
    build(data / "archive.sqlite3").conn.close()
    return data


@pytest.fixture
def state(archive: Path) -> WebState:
    return WebState.of(web_settings(archive))


@pytest.fixture
async def client(state: WebState) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(state) as c:
        yield c
    state.db.dispose()
