"""The plugin contract is written once (snapshot_runner.py's docstring), copied in the docs."""

from __future__ import annotations

from pathlib import Path

from shared.hooks import snapshot_runner

README = Path(__file__).resolve().parents[2] / "plugins" / "README.md"


def test_plugins_readme_carries_the_contract_verbatim() -> None:
    doc = snapshot_runner.__doc__
    assert doc
    contract = doc.split("\n", 1)[1].strip()  # everything after the summary line
    assert contract in README.read_text(), "plugins/README.md: copy snapshot_runner.py's docstring"


def test_contract_names_every_error_code_and_flag() -> None:
    doc = snapshot_runner.__doc__ or ""
    for needle in (
        "E_<PLUGIN>_TIMEOUT",
        "E_<PLUGIN>_FAILED",
        "E_<PLUGIN>_CONFIG",
        "E_BINARY_MISSING",
        "--url=",
        "--snapshot-id=",
        "--timeout=",
        "<PLUGIN>_ENABLED",
        "<PLUGIN>_TIMEOUT",
        ".pid",
        "SIGTERM",
        "SIGKILL",
        "retry_at",
        ".bg",
    ):
        assert needle in doc, needle
