"""Every web route, driven from its OpenAPI schema by schemathesis: malformed parameters, huge
values and FTS syntax answer 4xx, never 500. In-process (ASGI) over a filled test archive;
NATS and S3 are unreachable, so routes that need them may answer 503 (by design).

SCHEMA_EXAMPLES examples per operation (25 in `make test`, 200 in `make chaos`)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from services.web.app import create_app
from services.web.state import WebState
from tests.web.archive import build
from tests.web.conftest import web_settings

EXAMPLES = int(os.environ.get("SCHEMA_EXAMPLES", "25"))


def app() -> Any:
    data = Path(tempfile.mkdtemp(prefix="dla-schema-"))
    atexit.register(shutil.rmtree, data, True)
    db = data / "archive.sqlite3"
    if not db.exists():
        build(db).conn.close()
    s = web_settings(data)
    return create_app(s, WebState.of(s))


APP = app()
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_no_route_answers_500(case: Any) -> None:
    response = case.call()
    assert response.status_code != 500, (
        f"{case.method} {case.formatted_path} {case.query!r} -> 500\n{response.text[:500]}"
    )
    assert response.status_code < 500 or response.status_code == 503, response.status_code


FTS = [
    '"', '""', "a AND", "OR", "NOT x", "NEAR(a b", "a*", "*", "^a", "a:b", "col:x", "(",
    ")", "a\x00b", "'", "\\", "%", "x" * 20_000, "é" * 5000, "{a b}", "a + - b", "NEAR(a b, -1)",
]  # fmt: skip


@pytest.mark.parametrize("q", FTS, ids=range(len(FTS)))
async def test_search_syntax_and_huge_queries_are_not_500(q: str) -> None:
    transport = httpx.ASGITransport(app=APP)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        for path in ("/search", "/search.json", "/"):
            r = await client.get(path, params={"q": q})
            assert r.status_code < 500, (path, q[:40], r.status_code, r.text[:300])
