"""Pages that opt out with X-No-Archive (header or meta) are declined and nothing is kept."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from shared.hooks.records import FileRecord
from testkit.httpserver import FixtureServer, Reply

RunFetch = Callable[..., Any]
PAGE = b"<!doctype html><title>hi</title><p>hi</p>"


@pytest.fixture
def site() -> Iterator[FixtureServer]:
    with FixtureServer() as s:
        s.routes["/header"] = Reply(
            PAGE, headers={"Content-Type": "text/html", "X-No-Archive": "yes"}
        )
        s.routes["/header-no"] = Reply(
            PAGE, headers={"Content-Type": "text/html", "X-No-Archive": "no"}
        )
        s.routes["/meta"] = Reply(
            b'<html><head><META NAME="X-No-Archive" CONTENT="Yes"></head><p>private</p></html>'
        )
        s.routes["/equiv"] = Reply(
            b"<html><head><meta http-equiv=x-no-archive content=1></head><p>x</p></html>"
        )
        s.routes["/meta-no"] = Reply(
            b'<html><head><meta name="x-no-archive" content="no"></head><p>x</p></html>'
        )
        s.routes["/hostile"] = Reply(b"<html>" + b"<meta name=a " * 20000 + b"<p>x</p>")
        yield s


@pytest.mark.parametrize("path", ["/header", "/meta", "/equiv"])
def test_an_opted_out_page_is_declined_and_nothing_is_kept(
    site: FixtureServer, run_fetch: RunFetch, path: str
) -> None:
    r = run_fetch(f"{site.base}{path}")
    assert r.code == 0
    assert (r.result.status, r.result.error_code) == ("failed", "E_FETCH_DECLINED")
    assert "declined" in r.result.output_str
    assert not [x for x in r.records if isinstance(x, FileRecord)]
    assert sorted(p.name for p in r.cwd.iterdir()) == []


@pytest.mark.parametrize("path", ["/header-no", "/meta-no"])
def test_an_explicit_no_archives_as_usual(
    site: FixtureServer, run_fetch: RunFetch, path: str
) -> None:
    r = run_fetch(f"{site.base}{path}")
    assert r.result.status == "succeeded"


def test_the_setting_archives_opted_out_pages_anyway(
    site: FixtureServer, run_fetch: RunFetch
) -> None:
    r = run_fetch(f"{site.base}/meta", FETCH_RESPECT_NO_ARCHIVE="false")
    assert r.result.status == "succeeded"
    assert (r.cwd / "body.html").exists()


def test_many_unclosed_meta_tags_are_not_an_opt_out(
    site: FixtureServer, run_fetch: RunFetch
) -> None:
    # the tag scan is bounded (512 bytes a tag), so this ends well within the hook's timeout
    r = run_fetch(f"{site.base}/hostile")
    assert r.result.status == "succeeded"
