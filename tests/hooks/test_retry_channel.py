"""The error table is the only channel of retries: every hook's failure, run through the
runner, gets a `retry_at` exactly when `shared/hooks/error_codes.py` says its code is retried,
whatever the hook's exit code. First every kind of the table printed by a hook that exits 0
and by one that exits 1; then the real hooks on their failure fixtures (fetch, reddit, a
platform's API and page hooks, navigate in a real browser page). Beyond this file, every
plugin test that runs hooks through the runner (`testkit.browser.run_hooks`: the browser
hooks' fixtures) checks the same of every result."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest

from shared.hooks.error_codes import KINDS, backs_off_domain, http_code, kind_of
from shared.hooks.records import ArchiveResultRecord
from shared.hooks.snapshot_runner import SnapshotSpec, run_snapshot
from testkit.browser import BrowserHarness, Collect, retried_as_the_table_says, run_hooks
from testkit.httpserver import FixtureServer, Reply
from testkit.platform_data import X_IDS
from testkit.platform_server import PlatformServer
from tests.hooks.support import Recorder, base_env

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
STATUSES = (404, 408, 410, 425, 429, 503)
HOOK = """from shared.hooks.records import ArchiveResultRecord, emit
emit(ArchiveResultRecord(status="failed", output_str="claimed", error_code={code!r}))
raise SystemExit({exit})
"""


def claims() -> list[tuple[str, str, int]]:
    """(plugin, code, exit) for every kind and the telling HTTP statuses, exiting 0 and 1."""
    codes = [f"E_K{i}_{what}" for i, what in enumerate(KINDS)]
    codes += [http_code(f"S{status}", status) for status in STATUSES]
    return [(f"c{i}x{rc}", c, rc) for i, c in enumerate(codes) for rc in (0, 1)]


async def test_every_kind_is_retried_as_the_table_says_whatever_the_exit_code(
    tmp_path: Path,
) -> None:
    plugins = tmp_path / "plugins"
    wanted = claims()
    for plugin, code, rc in wanted:
        (plugins / plugin).mkdir(parents=True)
        hook = plugins / plugin / "on_Snapshot__10_claim.py"
        hook.write_text(HOOK.format(code=code, exit=rc))
    rec = Recorder()
    spec = SnapshotSpec(snapshot_id="s", url="https://example.org/", out_dir=tmp_path / "out",
                        plugins_dirs=[plugins], env=base_env())  # fmt: skip
    outcome = await run_snapshot(spec, rec, kill_grace=0.5)
    assert len(outcome.hooks) == len(wanted)
    for ended in outcome.hooks:
        result = ended.result
        kind = kind_of(result.error_code)
        assert result.status == "failed" and kind is not None, result
        assert (result.retry_at is not None) == kind.retry, result
        assert retried_as_the_table_says(result)


def run_plugin(url: str, out_dir: Path, hooks: list[str], **env: str) -> Collect:
    """The named plugins' hooks through the runner, without a browser."""
    seen = Collect()
    spec = SnapshotSpec(snapshot_id="s", url=url, out_dir=out_dir, plugins_dirs=[PLUGINS],
                        env={**os.environ, "ALLOW_PRIVATE_TARGETS": "true", **env},
                        only_hooks=hooks)  # fmt: skip
    asyncio.run(run_snapshot(spec, seen, kill_grace=5))
    return seen


REDDIT_LINK = "https://www.reddit.com/r/t/comments/abc123/a_title/"
REDDIT_PATH = "/r/t/comments/abc123/a_title/"


@pytest.fixture
def statuses() -> Iterator[FixtureServer]:
    """/<status> answers that status with an HTML body, and so do the Reddit thread's page and
    JSON below it."""
    with FixtureServer() as s:
        for status in STATUSES:
            reply = Reply(b"<h1>no</h1>", status, {"Content-Type": "text/html"})
            for path in ("", REDDIT_PATH, REDDIT_PATH.rstrip("/") + "/.json"):
                s.routes[f"/{status}{path}"] = reply
        yield s


@pytest.mark.parametrize("status", STATUSES)
def test_fetch_failures_agree_with_the_table(
    statuses: FixtureServer, tmp_path: Path, status: int
) -> None:
    seen = run_plugin(f"{statuses.base}/{status}", tmp_path, ["fetch"])
    result = seen.final["fetch"]
    assert result.error_code == http_code("FETCH", status) and retried_as_the_table_says(result), (
        result
    )


@pytest.mark.parametrize(("status", "code", "retried"), [
    (410, "E_REDDIT_HTTP_410", False),  # gone for good: final (it was retried as FAILED)
    (404, "E_REDDIT_NOT_FOUND", False),
    (408, "E_REDDIT_HTTP_408", True),
    (503, "E_REDDIT_HTTP_5XX", True),
    (429, "E_REDDIT_RATE_LIMITED", True),
])  # fmt: skip
def test_reddit_failures_agree_with_the_table(
    statuses: FixtureServer, tmp_path: Path, status: int, code: str, retried: bool
) -> None:
    base = f"{statuses.base}/{status}"
    seen = run_plugin(REDDIT_LINK, tmp_path, ["reddit"], REDDIT_OLD_BASE=base,
                      REDDIT_WWW_BASE=base, REDDIT_JSON_BASE=base,
                      REDDIT_REQUEST_TIMEOUT="10")  # fmt: skip
    result = seen.final["reddit"]
    assert (result.status, result.error_code) == ("failed", code), result
    assert (result.retry_at is not None) == retried and retried_as_the_table_says(result)


def test_platform_hooks_failures_agree_with_the_table(tmp_path: Path) -> None:
    """X's API hook on a removed post (final), and its page hook on a browser page that was a
    server error (retried, as navigate's 5xx is)."""
    out = tmp_path / "out"
    (out / "dom").mkdir(parents=True)
    (out / "dom" / "dom.html").write_text("<h1>oops</h1>")
    (out / "navigate").mkdir()
    (out / "navigate" / "navigate.json").write_text(json.dumps({"status": 503}))
    with PlatformServer() as server:
        steps = "syndication,fxtwitter"
        link = f"https://x.com/ada_example/status/{X_IDS['tombstone']}"
        seen = run_plugin(link, out, ["x"], X_STEPS=steps,
                          **server.bases())  # fmt: skip
    api, page = (seen.final[k] for k in sorted(seen.final))
    assert (api.error_code, api.retry_at) == ("E_X_REMOVED", None) and retried_as_the_table_says(
        api
    ), api
    assert (
        page.error_code == "E_X_HTTP_5XX"
        and page.retry_at is not None
        and retried_as_the_table_says(page)
    )


@pytest.fixture
def site() -> Iterator[FixtureServer]:
    with FixtureServer() as s:
        for status in STATUSES:
            s.routes[f"/{status}"] = Reply(b"<h1>no</h1>", status, {"Content-Type": "text/html"})
        yield s


@pytest.mark.integration
@pytest.mark.parametrize("status", STATUSES)
async def test_navigate_failures_agree_with_the_table(
    browser: BrowserHarness, site: FixtureServer, tmp_path: Path, status: int
) -> None:
    """A 429 page is retried and backs its domain off (it was never retried); 408 and 425 are
    retried; 404 and 410 are final."""
    seen = await run_hooks(browser, f"{site.base}/{status}", tmp_path, ["navigate"])
    result = seen.final["navigate"]
    assert result.error_code == http_code("NAVIGATE", status) and retried_as_the_table_says(
        result
    ), result
    assert (result.retry_at is not None) == (status in (408, 425, 429, 503))
    assert backs_off_domain(result.error_code) == (status == 429)


@pytest.fixture
def waits() -> Iterator[FixtureServer]:
    """/429 asks to wait two hours; /503 until a date three hours from now."""
    later = format_datetime(datetime.now(UTC) + timedelta(hours=3), usegmt=True)
    with FixtureServer() as s:
        s.routes["/429"] = Reply(b"<h1>slow down</h1>", 429,
                                 {"Content-Type": "text/html", "Retry-After": "7200"})  # fmt: skip
        s.routes["/503"] = Reply(b"<h1>maintenance</h1>", 503,
                                 {"Content-Type": "text/html", "Retry-After": later})  # fmt: skip
        yield s


def waited(result: ArchiveResultRecord, hours: float) -> None:
    """The result carries the site's wait, and its retry keeps it (the first retry alone
    would come after 5 min)."""
    assert result.retry_after_s is not None, result
    assert abs(result.retry_after_s - hours * 3600) < 60, result
    assert result.retry_at is not None
    assert result.retry_at >= datetime.now(UTC) + timedelta(hours=hours) - timedelta(minutes=1)
    assert "asks to wait" in result.output_str


@pytest.mark.parametrize(("status", "hours"), [(429, 2), (503, 3)])
def test_the_fetch_keeps_the_wait_a_site_asks_for(
    waits: FixtureServer, tmp_path: Path, status: int, hours: float
) -> None:
    seen = run_plugin(f"{waits.base}/{status}", tmp_path, ["fetch"])
    waited(seen.final["fetch"], hours)


@pytest.mark.integration
async def test_navigate_keeps_the_wait_a_site_asks_for(
    browser: BrowserHarness, waits: FixtureServer, tmp_path: Path
) -> None:
    seen = await run_hooks(browser, f"{waits.base}/429", tmp_path, ["navigate"])
    waited(seen.final["navigate"], 2)
