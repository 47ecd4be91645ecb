"""Every setting of every service is documented in the README (Datasette's rule)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

from services.poller.settings import PollerSettings
from services.web.settings import WebSettings
from services.writer.settings import WriterSettings
from shared.capture.settings import WorkerSettings

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


@pytest.mark.parametrize(
    "settings",
    [PollerSettings, WriterSettings, WorkerSettings, WebSettings],
    ids=lambda s: s.__name__,
)
def test_every_setting_is_in_the_readme(settings: type[BaseSettings]) -> None:
    missing = [n.upper() for n in settings.model_fields if f"`{n.upper()}`" not in README]
    assert not missing, f"README.md does not document {missing}"
