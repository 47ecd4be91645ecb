"""Helpers for the hook-runner tests: a recording observer and a one-call snapshot run."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from shared.hooks.config import env_prefix
from shared.hooks.records import ArchiveResultRecord, HookRecord
from shared.hooks.snapshot_runner import HookSpec, SnapshotOutcome, SnapshotSpec, run_snapshot

FIXTURES = Path(__file__).parent / "fixtures" / "plugins"

LANGS = [
    pytest.param(("sh", True), id="sh"),
    pytest.param(("py", True), id="py-host"),
    pytest.param(("py", False), id="py-exec"),
]
"""(plugin suffix, python_host): every behaviour is checked in sh, and in Python both forked
from the pre-warmed host and exec'd."""


@dataclass
class Recorder:
    """A HookObserver that keeps everything, with arrival times."""

    records: list[tuple[str, HookRecord, float]] = field(default_factory=list)
    finished: dict[str, tuple[ArchiveResultRecord, Path, float]] = field(default_factory=dict)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def record(self, hook: HookSpec, record: HookRecord) -> None:
        self.records.append((hook.key, record, time.monotonic()))
        self.arrived.set()

    async def wait_for_tag(self, plugin: str, name: str) -> None:
        """Return once `plugin` has printed the Tag `name`."""
        while name not in self.tags(plugin):
            self.arrived.clear()
            await self.arrived.wait()

    async def hook_finished(
        self, hook: HookSpec, result: ArchiveResultRecord, output_dir: Path
    ) -> None:
        assert hook.key not in self.finished, f"{hook.key} finished twice"
        self.finished[hook.key] = (result, output_dir, time.monotonic())

    def of(self, plugin: str) -> list[HookRecord]:
        """Records streamed for a plugin's hooks, in arrival order."""
        return [r for key, r, _ in self.records if key.split("/")[0] == plugin]

    def tags(self, plugin: str) -> list[str]:
        return [r.name for r in self.of(plugin) if r.type == "Tag"]

    def statuses(self, plugin: str) -> list[str]:
        return [r.status for r in self.of(plugin) if isinstance(r, ArchiveResultRecord)]


def sh_hook(plugins: Path, plugin: str, name: str, script: str) -> Path:
    """An executable sh hook `plugins/<plugin>/<name>` running `script`; returns its path."""
    folder = plugins / plugin
    folder.mkdir(parents=True, exist_ok=True)
    hook = folder / name
    hook.write_text(f"#!/bin/sh\n{script}\n")
    hook.chmod(0o755)
    return hook


def base_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CFG_", "TIMEOUT"))}
    env["TIMEOUT"] = "10"
    env.update(extra)
    return env


async def capture(
    tmp_path: Path,
    only: list[str] | None,
    *,
    env: dict[str, str] | None = None,
    python_host: bool = True,
    kill_grace: float = 0.5,
    plugins_dirs: list[Path] | None = None,
    **spec_fields: object,
) -> tuple[SnapshotOutcome, Recorder]:
    """Run one snapshot over the fixture plugins; returns the outcome and what was observed."""
    rec = Recorder()
    spec = SnapshotSpec(
        snapshot_id="snap-1",
        url="https://example.org/a?b=c",
        out_dir=tmp_path / "out",
        plugins_dirs=plugins_dirs or [FIXTURES],
        env=env if env is not None else base_env(),
        only_hooks=only,
        **spec_fields,  # type: ignore[arg-type]
    )
    outcome = await run_snapshot(spec, rec, kill_grace=kill_grace, python_host=python_host)
    assert outcome.status == "sealed"
    return outcome, rec


READY_TIMEOUTS = (0.5, 2.0, 8.0)
"""Hook timeouts tried in turn by `capture_ready`: the short one proves the point quickly on an
idle machine; the longer ones give a freshly exec'd interpreter time to come up on a loaded one."""
OTHERS_TIMEOUT = 60.0
"""The timeout of the hooks `capture_ready` runs beside the one it times out."""


async def capture_ready(
    tmp_path: Path,
    only: list[str],
    *,
    ready: tuple[str, str],
    python_host: bool = True,
    kill_grace: float = 0.5,
) -> tuple[SnapshotOutcome, Recorder, float]:
    """Run a snapshot whose hook must be killed at its timeout, with the timeout it needs.

    A timeout test proves something only if the hook was up (its signal handlers installed, its
    first record printed) before the runner's clock ran out; on a loaded machine an exec'd
    interpreter may still be importing by then. The hook prints the Tag `ready` = (plugin,
    name) once it is up: a run where that tag never arrived is repeated with the next, longer
    timeout of READY_TIMEOUTS. Returns (outcome, recorder, the timeout used)."""
    plugin, tag = ready
    # the other hooks are not under test: their own timeout lets an exec'd interpreter come
    # up on a loaded machine (the short one is the killed hook's, through TIMEOUT)
    others = {f"{env_prefix(p)}_TIMEOUT": str(OTHERS_TIMEOUT) for p in only if p != plugin}
    for attempt, timeout in enumerate(READY_TIMEOUTS):
        outcome, rec = await capture(
            tmp_path / f"attempt-{attempt}",
            only,
            env=base_env(TIMEOUT=str(timeout), **others),
            python_host=python_host,
            kill_grace=kill_grace,
        )
        if tag in rec.tags(plugin):
            return outcome, rec, timeout
    pytest.fail(f"{plugin} never printed {tag!r} within {READY_TIMEOUTS[-1]} s")
