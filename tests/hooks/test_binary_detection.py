"""binaries.jsonl: detection at worker start, and hooks skipped while a binary is missing."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

from shared.hooks.binary_detection import detect_binaries, read_binaries
from tests.hooks.support import FIXTURES, capture


def test_detect_binaries_finds_path_version_and_hash() -> None:
    found = {b.name: b for b in detect_binaries([FIXTURES])}
    assert set(found) == {"dla-no-such-binary-xyz", "sh", "yt-dlp"}
    missing = found["dla-no-such-binary-xyz"]
    assert missing.status == "failed" and missing.abspath is None
    sh = found["sh"]
    assert sh.status == "succeeded" and sh.abspath == shutil.which("sh")
    assert sh.abspath is not None
    assert sh.sha256 == hashlib.sha256(Path(os.path.realpath(sh.abspath)).read_bytes()).hexdigest()
    assert sh.binproviders == "apt,env" or sh.binproviders == "env"
    ytdlp = found["yt-dlp"]  # in the venv's bin folder, even when that is not on PATH
    assert ytdlp.status == "succeeded" and ytdlp.binprovider == "pip"
    assert ytdlp.abspath is not None
    assert Path(ytdlp.abspath).parent == Path(sys.executable).parent
    assert ytdlp.version and ytdlp.version[:4].isdigit()  # yt-dlp --version: 2025.xx.xx
    assert ytdlp.binproviders == "pip,apt,env"  # the bin_providers spelling is accepted too


def test_read_binaries_are_queued_requirements() -> None:
    wanted = read_binaries(FIXTURES / "needs_present")
    assert [(b.name, b.status) for b in wanted] == [("sh", "queued"), ("yt-dlp", "queued")]
    assert read_binaries(FIXTURES / "ok_sh") == []


async def test_missing_binary_skips_the_hook_without_retry(tmp_path: Path) -> None:
    outcome, rec = await capture(tmp_path, ["needs_missing", "ok_sh"])
    hook = outcome.result("needs_missing")
    assert hook.result.status == "skipped" and hook.result.error_code == "E_BINARY_MISSING"
    assert "dla-no-such-binary-xyz" in hook.result.output_str
    assert hook.result.retry_at is None and not hook.retry and not hook.hard_failure
    assert not (tmp_path / "out" / "needs_missing" / "ran.txt").exists()
    assert rec.statuses("needs_missing") == ["queued"]  # never started
    assert outcome.result("ok_sh").result.status == "succeeded"


async def test_worker_detection_result_is_used_and_paths_are_handed_over(tmp_path: Path) -> None:
    binaries = detect_binaries([FIXTURES])
    outcome, _ = await capture(tmp_path, ["needs_present", "needs_missing"], binaries=binaries)
    assert outcome.result("needs_present").result.status == "succeeded"
    assert outcome.result("needs_missing").result.status == "skipped"
    handed = json.loads((tmp_path / "out" / "needs_present" / "bins.json").read_text())
    assert handed["SH_BINARY"] == shutil.which("sh")
    assert handed["YT_DLP_BINARY"] == str(Path(sys.executable).parent / "yt-dlp")
    # a binary the worker saw as failed keeps the hook skipped even if it would be found now
    gone = [
        b.model_copy(update={"status": "failed", "abspath": None}) if b.name == "sh" else b
        for b in binaries
    ]
    outcome, _ = await capture(tmp_path / "again", ["needs_present"], binaries=gone)
    assert outcome.result("needs_present").result.error_code == "E_BINARY_MISSING"
