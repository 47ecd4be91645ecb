"""Compression bombs through the egress proxy over HTTPS, in the real browser: a page whose
body is gzip, br or zstd (every coding Chromium asks for over HTTPS) expanding to 64 MiB is
cut at the byte cap by its decoded size, counted a piece at a time (never held), and the
navigation ends at once as too large (shared.fetching.decoding,
services/archiver/egress/exchange.py). A server that sends its coding unasked is bounded the
same way."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import brotlicffi
import pytest
import trustme
from backports import zstd

from testkit.browser import BrowserHarness, run_hooks, tls_context
from testkit.httpserver import FixtureServer, Reply

pytestmark = pytest.mark.integration
MB = 1024 * 1024
CAP = 4 * MB
EXPANDED = 64 * MB
PIECE = MB
"""The egress decodes a MiB at a time: it counts at most one piece past the cap."""


def bomb(coding: str) -> bytes:
    """An HTML page of EXPANDED bytes, nearly all spaces, in `coding`."""
    page = b"<!doctype html><html><body><p>" + b" " * EXPANDED
    if coding == "gzip":
        return gzip.compress(page, 6)
    if coding == "br":
        return bytes(brotlicffi.compress(page, quality=5))
    return zstd.compress(page)


@pytest.fixture(scope="module")
def site(test_ca: trustme.CA) -> Iterator[FixtureServer]:
    with FixtureServer("127.0.0.7", tls=tls_context(test_ca, "127.0.0.7")) as s:
        for coding in ("gzip", "br", "zstd"):
            headers = {"Content-Type": "text/html", "Content-Encoding": coding}
            s.routes[f"/{coding}"] = Reply(bomb(coding), headers=headers)
        yield s


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
async def test_a_bomb_over_https_is_cut_at_the_cap_by_its_decoded_size(
    https_browser: BrowserHarness, site: FixtureServer, tmp_path: Path, coding: str
) -> None:
    url = f"{site.base}/{coding}"
    seen = await run_hooks(
        https_browser, url, tmp_path, ["navigate"], page={"max_response_bytes": CAP}
    )
    result = seen.final["navigate"]
    assert (result.status, result.error_code) == ("failed", "E_NAVIGATE_TOO_LARGE"), result
    nav = json.loads((tmp_path / "navigate" / "navigate.json").read_text())
    [cut] = [t for t in nav["truncated"] if t["url"] == url]
    # cut by what it decodes to, not by its few compressed KiB, and no further than a piece
    assert cut["bytes"] < CAP < cut["inflated"] <= CAP + PIECE, cut
