"""Artifacts through a real S3 (SeaweedFS): presigned or proxied, HTML never renders."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from services.web.connections import open_storage
from services.web.settings import WebSettings
from services.web.state import WebState
from shared.s3 import ObjectStore
from tests.web.archive import LOAF, files
from tests.web.conftest import client_for, web_settings

pytestmark = pytest.mark.integration


def s3_settings(archive: Path, s3_env: dict[str, str], **extra: object) -> WebSettings:
    return web_settings(
        archive,
        s3_endpoint=s3_env["S3_ENDPOINT"],
        s3_bucket="web-tests",  # its own bucket: other tests' backups are not ours
        aws_access_key_id=s3_env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=s3_env["AWS_SECRET_ACCESS_KEY"],
        **extra,
    )


async def upload(settings: WebSettings) -> None:
    """Put link 1's artifacts and a backup in the bucket."""
    async with ObjectStore(settings) as store:
        await store.ensure_bucket()
        for f in files():
            await store.put_bytes(f.s3_key, f.data, f.content_type)
        await store.put_bytes("db-backups/2026-01-02/archive.sqlite3.gz", b"gz", "application/gzip")


@pytest.fixture(scope="module")
def stored(s3_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> None:
    asyncio.run(upload(s3_settings(tmp_path_factory.mktemp("x"), s3_env)))


async def open_client(state: WebState) -> AsyncIterator[httpx.AsyncClient]:
    async with open_storage(state), client_for(state) as c:
        yield c


@pytest.fixture
async def presigned(archive, s3_env, stored) -> AsyncIterator[httpx.AsyncClient]:
    async for c in open_client(WebState.of(s3_settings(archive, s3_env))):
        yield c


@pytest.fixture
async def proxied(archive, s3_env, stored) -> AsyncIterator[httpx.AsyncClient]:
    state = WebState.of(s3_settings(archive, s3_env, artifact_delivery="proxy"))
    async for c in open_client(state):
        yield c


async def follow(c: httpx.AsyncClient, path: str) -> httpx.Response:
    resp = await c.get(path)
    assert resp.status_code == 302 and resp.headers["cache-control"] == "no-store"
    async with httpx.AsyncClient() as s3:
        return await s3.get(resp.headers["location"])


async def test_presigned_raw_html_downloads_and_screenshots_show(presigned) -> None:
    raw = await follow(presigned, "/artifacts/2")
    assert raw.status_code == 200 and b"__pwned" in raw.content
    assert raw.headers["content-disposition"].startswith("attachment")
    assert raw.headers["content-type"] == "application/octet-stream"
    shot = await follow(presigned, "/artifacts/1")
    assert shot.headers["content-type"] == "image/png"
    assert shot.headers["content-disposition"].startswith("inline")


async def test_proxied_artifacts_are_sandboxed_attachments(proxied) -> None:
    raw = await proxied.get("/artifacts/2")
    assert raw.status_code == 200 and b"__pwned" in raw.content
    assert raw.headers["content-disposition"].startswith("attachment")
    assert raw.headers["content-type"] == "application/octet-stream"
    assert raw.headers["content-security-policy"].startswith("sandbox")
    shot = await proxied.get("/artifacts/1")
    assert shot.headers["content-type"] == "image/png" and shot.content.startswith(b"\x89PNG")


async def test_proxied_artifacts_answer_byte_ranges_as_s3_does(presigned, proxied) -> None:
    """A video's player seeks (and Safari plays at all) only with ranges: proxied, an
    artifact answers one range with 206 as the presigned S3 URL does."""
    whole = (await proxied.get("/artifacts/1")).content
    size = len(whole)
    assert (await proxied.get("/artifacts/1")).headers["accept-ranges"] == "bytes"
    asks = [("bytes=0-9", 0, 9), ("bytes=10-", 10, size - 1), ("bytes=-4", size - 4, size - 1),
            ("bytes=5-99999", 5, size - 1)]  # fmt: skip
    for asked, first, last in asks:
        part = await proxied.get("/artifacts/1", headers={"range": asked})
        assert part.status_code == 206, asked
        assert part.content == whole[first : last + 1], asked
        assert part.headers["content-range"] == f"bytes {first}-{last}/{size}"
        assert part.headers["content-type"] == "image/png"
        s3 = await presigned.get("/artifacts/1")
        async with httpx.AsyncClient() as direct:
            same = await direct.get(s3.headers["location"], headers={"range": asked})
        assert (same.status_code, same.content) == (206, part.content), "as S3 answers"
    past = await proxied.get("/artifacts/1", headers={"range": f"bytes={size}-"})
    assert past.status_code == 416 and past.headers["content-range"] == f"bytes */{size}"
    several = await proxied.get("/artifacts/1", headers={"range": "bytes=0-1,4-5"})
    assert several.status_code == 200 and several.content == whole, "one range or the whole"


async def test_reader_view_is_the_sanitized_article(presigned) -> None:
    """The sanitiser's output as it is, its image served from our copy (an artifact)."""
    page = (await presigned.get("/links/1", headers={"accept": "text/html"})).text
    reader = page.split('id="reader"')[1].split("</section>")[0]
    assert "Starter care" in reader and 'href="https://example.org/ok"' in reader
    for bad in ("<script", "onerror", "javascript:", "<iframe", "<style", "tracker.example"):
        assert bad not in reader, bad
    (src,) = re.findall(r'<img[^>]* src="([^"]+)"', reader)
    assert src.startswith("/artifacts/")
    image = await follow(presigned, src)
    assert image.content == LOAF and image.headers["content-type"] == "image/png"


async def test_latest_backup_is_a_download(presigned) -> None:
    backup = await follow(presigned, "/export/backup")
    assert backup.content == b"gz"
    assert 'filename="archive-2026-01-02.sqlite3.gz"' in backup.headers["content-disposition"]


async def test_health_is_ok_with_everything_up(presigned) -> None:
    body = (await presigned.get("/healthz")).json()
    assert body["s3"] is True and body["db"] is True
