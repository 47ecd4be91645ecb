"""Runs the fetch hook as a real process forked from the test process's hook host, as the
runner would (cwd = its output folder)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from shared.hooks.records import ArchiveResultRecord, FileRecord, HookRecord, parse_record
from testkit.hook_runs import run_hook

HOOK = Path(__file__).resolve().parents[1] / "on_Snapshot__41_fetch.py"


@dataclass
class Run:
    """One run of the hook."""

    code: int
    records: list[HookRecord]
    cwd: Path

    @property
    def result(self) -> ArchiveResultRecord:
        return next(r for r in self.records if isinstance(r, ArchiveResultRecord))

    @property
    def files(self) -> dict[str, FileRecord]:
        return {r.path: r for r in self.records if isinstance(r, FileRecord)}

    @property
    def meta(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.cwd / "headers.json").read_text())
        return data


RunFetch = Callable[..., Run]


@pytest.fixture
def run_fetch(tmp_path: Path) -> RunFetch:
    """run_fetch(url, **env) -> Run in tmp_path; short timeouts unless the test sets its own."""

    def run(url: str, **env: str) -> Run:
        full = {
            **os.environ,
            "ALLOW_PRIVATE_TARGETS": "true",
            "FETCH_TIMEOUT": "10",
            "FETCH_IDLE_TIMEOUT": "2",
            "FETCH_HEADER_TIMEOUT": "3",
            **env,
        }
        proc = run_hook(HOOK, [f"--url={url}", "--snapshot-id=s1"], tmp_path, full, timeout=300)
        lines = proc.stdout.decode().splitlines()
        return Run(proc.returncode, [parse_record(x) for x in lines if x.strip()], tmp_path)

    return run
