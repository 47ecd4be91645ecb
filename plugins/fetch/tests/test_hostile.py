"""Hostile servers: every stall kind, short bodies, huge bodies, a gzip bomb, downloads.

Each ends within its own limit (the error code says which rule ended it, never the total
timeout) with the right status; nothing that is not a page is stored.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import brotlicffi
import pytest
from backports import zstd

from testkit.rawserver import (
    RawServer,
    drip,
    endless_headers,
    head,
    reply,
    short_body,
    silent,
    stream,
)

RunFetch = Callable[..., Any]
"""The run_fetch fixture (conftest.py): run_fetch(url, **env) -> a finished run."""
MB = 1024 * 1024


def gzip_bomb(expanded: int) -> bytes:
    """An HTML page of `expanded` bytes, nearly all spaces, gzipped (about 1000:1)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b" " * MB
    start = z.compress(b"<!doctype html><html><body><p>")
    return start + b"".join(z.compress(block) for _ in range(expanded // MB)) + z.flush()


def a_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("data.bin", bytes(range(256)) * 8192)
    return buf.getvalue()


@pytest.fixture(scope="module")
def hostile() -> Iterator[RawServer]:
    with RawServer() as s:
        s.routes["/drip"] = drip(0.5)
        s.routes["/short"] = short_body(1000, 100_000)
        s.routes["/endless-headers"] = endless_headers(0.5)
        s.routes["/silent"] = silent
        s.routes["/huge"] = stream(
            head(Content_Type="text/html", Content_Length=150 * MB), b"<p>" + b"x" * 65533, 150 * MB
        )
        bomb = gzip_bomb(64 * MB)
        s.routes["/bomb"] = reply(
            head(Content_Type="text/html", Content_Encoding="gzip", Content_Length=len(bomb)) + bomb
        )
        page = b"<!doctype html><html><body><p>" + b" " * (64 * MB)
        for coding, packed in (("br", brotlicffi.compress(page, quality=5)),
                               ("zstd", zstd.compress(page))):  # fmt: skip
            s.routes[f"/bomb-{coding}"] = reply(
                head(Content_Type="text/html", Content_Encoding=coding, Content_Length=len(packed))
                + packed
            )
        zipped = a_zip()
        s.routes["/download.zip"] = reply(
            head(Content_Type="application/zip", Content_Length=len(zipped)) + zipped
        )
        s.routes["/lying.html"] = reply(
            head(Content_Type="text/html", Content_Length=len(zipped)) + zipped
        )
        yield s


def test_body_dripping_a_byte_at_a_time_is_stalled(hostile: RawServer, run_fetch: RunFetch) -> None:
    r = run_fetch(f"{hostile.base}/drip")
    assert r.code == 1, "a stall may heal: retried"
    assert r.result.status == "failed" and r.result.error_code == "E_FETCH_STALLED"
    assert not list(r.cwd.glob("body*"))


def test_body_shorter_than_its_content_length_is_truncated(
    hostile: RawServer, run_fetch: RunFetch
) -> None:
    r = run_fetch(f"{hostile.base}/short")
    assert r.code == 1, "a short body is retried"
    assert r.result.error_code == "E_FETCH_TRUNCATED"
    assert "1000 of 100000" in r.result.output_str
    assert not list(r.cwd.glob("body*"))


def test_headers_that_never_end_hit_the_header_timeout(
    hostile: RawServer, run_fetch: RunFetch
) -> None:
    r = run_fetch(f"{hostile.base}/endless-headers")
    assert r.code == 1 and r.result.error_code == "E_FETCH_TIMEOUT"
    assert "headers" in r.result.output_str


def test_server_that_never_answers_is_stalled(hostile: RawServer, run_fetch: RunFetch) -> None:
    r = run_fetch(f"{hostile.base}/silent")
    assert r.code == 1 and r.result.error_code == "E_FETCH_STALLED"


def test_150_mb_page_keeps_the_capped_part_as_partial(
    hostile: RawServer, run_fetch: RunFetch
) -> None:
    # default cap: 100 MiB; the timeouts are bounds (100 MiB read and kept in its WARC take
    # past 10 s at load 20), what is tested is the cap
    r = run_fetch(f"{hostile.base}/huge", FETCH_TIMEOUT="150", FETCH_IDLE_TIMEOUT="30")
    assert r.code == 0, "a retry would hit the same cap"
    assert r.result.status == "partial" and r.result.error_code == "E_FETCH_TOO_LARGE"
    assert (r.cwd / "body.html").stat().st_size == 100 * MB
    assert r.files["body.html"].truncated and r.meta["declared_length"] == 150 * MB


@pytest.mark.parametrize("path", ["/bomb", "/bomb-br", "/bomb-zstd"])
def test_gzip_bomb_is_refused_early(hostile: RawServer, run_fetch: RunFetch, path: str) -> None:
    """gzip, and br and zstd sent unasked (the fetch asks for gzip and deflate only): the one
    bounded decoder (shared.fetching.decoding) stops each past the ratio."""
    r = run_fetch(f"{hostile.base}{path}")
    assert r.code == 0
    assert r.result.status == "failed" and r.result.error_code == "E_FETCH_BOMB"
    assert not list(r.cwd.glob("body*")) and not list(r.cwd.glob("*.part"))


@pytest.mark.parametrize("path", ["/download.zip", "/lying.html"])
def test_zip_download_is_not_html_and_not_stored(
    hostile: RawServer, run_fetch: RunFetch, path: str
) -> None:
    r = run_fetch(f"{hostile.base}{path}")
    assert r.code == 0, "not retried: a download stays a download"
    assert r.result.status == "failed" and r.result.error_code == "E_FETCH_NOT_HTML"
    assert "application/zip" in r.result.output_str
    assert r.meta["effective_type"] == "application/zip" and r.meta["declared_length"] > 0
    assert not list(r.cwd.glob("body*")) and not list(r.cwd.glob("*.warc.gz"))


def test_not_html_is_kept_when_the_setting_allows(hostile: RawServer, run_fetch: RunFetch) -> None:
    r = run_fetch(f"{hostile.base}/download.zip", FETCH_STORE_NOT_HTML="true")
    assert r.result.error_code == "E_FETCH_NOT_HTML"
    assert zipfile.ZipFile(r.cwd / "body.zip").namelist() == ["data.bin"]
