"""Coverage-guided fuzzing (atheris) of link extraction, canonicalisation and feed parsing,
bounded in time: FUZZ_SECONDS per target (5 in `make test`, 60 in `make chaos`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from testkit.chaos import record
from tests.hostile.fuzz_targets import SEEDS, TARGETS

REPO = Path(__file__).resolve().parents[2]
SECONDS = int(os.environ.get("FUZZ_SECONDS", "5"))


@pytest.mark.timeout(120 + 2 * SECONDS)
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_fuzz(target: str, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i, seed in enumerate(SEEDS[target]):
        (corpus / f"seed{i}").write_bytes(seed)
    argv = [
        sys.executable, "-m", "tests.hostile.fuzz_targets", target,
        f"-max_total_time={SECONDS}", "-rss_limit_mb=1024", "-max_len=8192",
        f"-artifact_prefix={tmp_path}/", str(corpus),
    ]  # fmt: skip
    result = subprocess.run(
        argv, cwd=REPO, capture_output=True, text=True, timeout=120 + 2 * SECONDS, check=False
    )
    crashes = sorted(p.name for p in tmp_path.glob("crash-*"))
    assert result.returncode == 0 and not crashes, (
        f"fuzzer found a failing input {crashes}:\n{result.stderr[-4000:]}"
    )
    runs = [line for line in result.stderr.splitlines() if line.startswith("Done ")]
    assert runs, result.stderr[-2000:]
    record(
        f"fuzz_{target}",
        {"seconds": SECONDS, "done": runs[-1], "corpus": len(list(corpus.iterdir())), "crashes": 0},
    )
