"""Every setting of every service is documented in the README (Datasette's rule)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

from services.archiver.settings import ArchiverSettings
from services.poller.settings import PollerSettings
from services.supervisor.cli.stack_client import CliSettings
from services.web.admin import AdminSettings
from services.web.settings import WebSettings
from services.writer.settings import WriterSettings
from shared.capture.settings import WorkerSettings

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


@pytest.mark.parametrize(
    "settings",
    [
        PollerSettings,
        WriterSettings,
        WorkerSettings,
        ArchiverSettings,
        WebSettings,
        CliSettings,
        AdminSettings,
    ],
    ids=lambda s: s.__name__,
)
def test_every_setting_is_in_the_readme(settings: type[BaseSettings]) -> None:
    missing = [n.upper() for n in settings.model_fields if f"`{n.upper()}`" not in README]
    assert not missing, f"README.md does not document {missing}"


def test_every_error_kind_is_in_the_plugin_docs() -> None:
    from shared.hooks.error_codes import KINDS

    docs = (Path(__file__).resolve().parents[1] / "plugins" / "README.md").read_text()
    rows = {
        line.split("|")[1].strip().strip("`"): line
        for line in docs.splitlines()
        if line.startswith("| `") and line.count("|") == 5
    }
    for what, kind in KINDS.items():
        assert what in rows, f"plugins/README.md does not document {what}"
        assert f"| {kind.reason} |" in rows[what], f"{what}: reason {kind.reason} not documented"
