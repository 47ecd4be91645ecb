"""A real browser broker for tests and benchmarks: the archiver's broker on its own event
loop in a thread, serving page sockets for snapshot folders (hooks connect to them as in
the archiver). Also counts the Chromium processes this test process started."""

from __future__ import annotations

import asyncio
import os
import ssl
import threading
import time
from collections.abc import Coroutine, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, TypeVar

import pytest
import trustme

from services.archiver.browser import BrowserBroker, BrowserLimits
from services.archiver.egress import EgressPolicy
from services.archiver.pageserver import page_socket
from services.archiver.pagesession import PageOptions
from shared import processes as proctree
from shared.capture.settings import REPO_PLUGINS
from shared.hooks.error_codes import retry_worthy
from shared.hooks.records import ArchiveResultRecord, HookRecord
from shared.hooks.snapshot_runner import HookSpec, SnapshotSpec, run_snapshot

T = TypeVar("T")
TEST_UA = "DLA-test/1.0"
TEST_BROWSER = os.environ.get("BROWSER_EXECUTABLE", BrowserLimits.executable)
"""The browser the harness drives: `BROWSER_EXECUTABLE` when set (to run the browser tests
on another Chromium build, e.g. chromium-headless-shell), else the archiver's default."""


class BrowserHarness:
    """One broker; `open(out_dir)` serves a snapshot page and returns the hooks' env."""

    def __init__(
        self, limits: BrowserLimits | None = None, *, extra_ca_file: str | None = None
    ) -> None:
        """`extra_ca_file`: PEM roots the egress proxy trusts beside the system's (a test
        server's CA), with the default limits."""
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        limits = limits or BrowserLimits(executable=TEST_BROWSER, extra_ca_file=extra_ca_file)
        self.broker = BrowserBroker(limits)
        self.run(self.broker.__aenter__())
        self.run(self.broker.warm())
        self._pages: dict[Path, AbstractAsyncContextManager[Any]] = {}

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 120) -> T:
        """Run a coroutine on the broker's loop and wait for it."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def open(
        self, out_dir: Path, *, allow_private: bool = True, policy: EgressPolicy | None = None,
        **options: Any,
    ) -> dict[str, str]:  # fmt: skip
        """Serve a page for the snapshot folder out_dir; returns {"PAGE_SOCKET": path}."""
        out_dir.mkdir(parents=True, exist_ok=True)
        opts = PageOptions(
            user_agent=TEST_UA, policy=policy or EgressPolicy(allow_private=allow_private),
            **options,
        )  # fmt: skip
        cm = page_socket(self.broker, out_dir, opts)
        env = self.run(cm.__aenter__())
        self._pages[out_dir] = cm
        return dict(env)

    def close(self, out_dir: Path) -> None:
        """End the snapshot's page (its context is closed)."""
        cm = self._pages.pop(out_dir)
        self.run(cm.__aexit__(None, None, None))

    def stop(self) -> None:
        """Close every page, the broker and the loop."""
        for out_dir in list(self._pages):
            self.close(out_dir)
        self.run(self.broker.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def chromium_pids() -> list[int]:
    """Chromium processes below this process (the ones its brokers launched)."""
    return [
        pid
        for pid in proctree.descendants(os.getpid())
        if pid != os.getpid() and proctree.exe_name(pid).startswith("chrom")
    ]


def new_chromium_pids(before: list[int]) -> list[int]:
    """Chromium processes of this test process that were not there `before` and do not
    descend from one that was. A browser still running from an earlier test (a session's
    warm browser) may start a renderer at any time, and one of `before` that has ended
    meanwhile is no leak either."""
    table = proctree.parents()
    older = {p for b in before for p in proctree.descendants(b, table)} | set(before)
    return sorted(set(chromium_pids()) - older)


def assert_no_chromium_leak(before: list[int], bound_s: float = 20.0) -> None:
    """Wait up to `bound_s` (a bound, not a timing: a killed browser's processes take
    seconds to end at load 8) for every Chromium process started since `before` to end."""
    deadline = time.monotonic() + bound_s
    while (left := new_chromium_pids(before)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"Chromium processes leaked: {left}"


@pytest.fixture(scope="session")
def browser() -> Iterator[BrowserHarness]:
    """A warm browser broker shared by a test session's browser tests."""
    harness = BrowserHarness()
    try:
        yield harness
    finally:
        harness.stop()


class Collect:
    """A HookObserver that keeps every record and final result."""

    def __init__(self) -> None:
        self.records: list[HookRecord] = []
        self.final: dict[str, ArchiveResultRecord] = {}

    async def record(self, hook: HookSpec, record: HookRecord) -> None:
        self.records.append(record)

    async def hook_finished(
        self, hook: HookSpec, result: ArchiveResultRecord, output_dir: Path
    ) -> None:
        self.final[hook.plugin if hook.plugin not in self.final else hook.key] = result


def retried_as_the_table_says(result: ArchiveResultRecord) -> bool:
    """What the runner did with a result is what shared/hooks/error_codes.py says of its code:
    a failed result has a retry_at exactly when its code is retried (attempts left), any
    other none. Every hook run through `run_hooks` is checked with it."""
    if result.status != "failed":
        return result.retry_at is None
    return (result.retry_at is not None) == retry_worthy(result.error_code)


async def run_hooks(
    harness: BrowserHarness | None,
    url: str,
    out_dir: Path,
    hooks: list[str],
    *,
    page: dict[str, Any] | None = None,
    **env: str,
) -> Collect:
    """Run the named plugins' hooks (through the runner) on one snapshot page of harness
    (None: no browser, as outside an archiver); `page` are BrowserHarness.open() options.
    `final` maps plugin (else hook key) to its last result."""
    page_env = harness.open(out_dir, **(page or {})) if harness is not None else {}
    try:
        spec = SnapshotSpec(
            snapshot_id="s1", url=url, out_dir=out_dir, plugins_dirs=[REPO_PLUGINS],
            env={**os.environ, "ALLOW_PRIVATE_TARGETS": "true", **page_env, **env},
            only_hooks=hooks,
        )  # fmt: skip
        seen = Collect()
        await run_snapshot(spec, seen, kill_grace=5)
        disagree = [r for r in seen.final.values() if not retried_as_the_table_says(r)]
        assert not disagree, f"the runner disagrees with shared/hooks/error_codes.py: {disagree}"
        return seen
    finally:
        if harness is not None:
            harness.close(out_dir)


@pytest.fixture(scope="session")
def test_ca() -> trustme.CA:
    """A test CA for HTTPS fixture servers (`tls_context`)."""
    return trustme.CA()


@pytest.fixture(scope="session")
def https_browser(
    test_ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BrowserHarness]:
    """A warm browser broker whose egress proxy trusts test_ca beside the system's roots."""
    roots = tmp_path_factory.mktemp("ca") / "roots.pem"
    test_ca.cert_pem.write_to_path(str(roots))
    harness = BrowserHarness(extra_ca_file=str(roots))
    try:
        yield harness
    finally:
        harness.stop()


def tls_context(ca: trustme.CA, host: str) -> ssl.SSLContext:
    """A server context for `host` with a certificate `ca` signed (FixtureServer's `tls`)."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(host).configure_cert(ctx)
    return ctx
