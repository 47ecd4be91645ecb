"""REPLAY_ORIGIN: an origin apart from the UI's by host name, or the loopback default."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from services.web.replay.origin import ReplayOriginError, effective, host_of, parse
from tests.web.conftest import web_settings


@pytest.mark.parametrize(
    ("value", "origin"),
    [
        ("https://Replay.Example.net", "https://replay.example.net"),
        ("https://replay.example.net:443/", "https://replay.example.net"),
        ("http://replay.localhost:8123", "http://replay.localhost:8123"),
        ("http://127.0.0.2:80", "http://127.0.0.2"),
    ],
)
def test_an_origin_is_kept_in_one_spelling(value: str, origin: str) -> None:
    assert parse(value) == origin


@pytest.mark.parametrize(
    "value",
    ["replay.example.net", "ftp://replay.example.net", "https://replay.example.net/replay/",
     "https://user@replay.example.net", "https://replay.example.net?x=1", "http://h:99999"],
)  # fmt: skip
def test_anything_but_an_origin_is_refused(value: str) -> None:
    with pytest.raises(ReplayOriginError):
        parse(value)
    with pytest.raises(ValidationError):
        web_settings(Path("/nowhere"), replay_origin=value)


def test_beside_a_loopback_ui_the_default_is_replay_localhost() -> None:
    assert effective("", "127.0.0.1", 8000) == "http://replay.localhost:8000"
    assert effective("", "localhost", 8001) == "http://replay.localhost:8001"
    assert effective("", "0.0.0.0", 8000) is None  # a public UI names its replay origin
    assert effective("", "127.0.0.1", 0) is None  # a port picked later: none to name
    assert effective("off", "127.0.0.1", 8000) is None
    assert effective("OFF", "0.0.0.0", 8000) is None


def test_the_ui_own_host_is_never_the_replay_origin() -> None:
    with pytest.raises(ReplayOriginError, match="shares a host name with the UI"):
        effective("http://127.0.0.1:9000", "127.0.0.1", 8000)  # another port is not enough
    assert effective("http://localhost:8000", "127.0.0.1", 8000) == "http://localhost:8000"
    assert effective("https://replay.example.net", "0.0.0.0", 8000) == (
        "https://replay.example.net"
    )


def test_the_host_header_of_an_origin() -> None:
    assert host_of("https://replay.example.net") == "replay.example.net"
    assert host_of("http://replay.localhost:8123") == "replay.localhost:8123"


def test_a_replay_origin_on_the_uis_host_is_refused_at_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The web refuses it as a setting (one line, exit 78: shared.setting_names), not with a
    traceback when its app is built."""
    from pydantic import ValidationError

    from services.web.settings import WebSettings
    from shared.setting_names import refused

    monkeypatch.setenv("WEB_HOST", "127.0.0.1")
    monkeypatch.setenv("REPLAY_ORIGIN", "http://127.0.0.1:9000")
    with pytest.raises(ValidationError) as caught:
        WebSettings()
    (line,) = refused(caught.value)
    assert line.startswith("REPLAY_ORIGIN='http://127.0.0.1:9000': ")
    assert "shares a host name with the UI" in line


def test_a_public_ui_without_a_replay_origin_says_it_offers_no_replay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from services.web.settings import WebSettings

    monkeypatch.setenv("WEB_HOST", "0.0.0.0")
    monkeypatch.delenv("REPLAY_ORIGIN", raising=False)
    (note,) = WebSettings().idle()
    assert note.startswith("no replay of captures: WEB_HOST='0.0.0.0' is not a loopback address")
    monkeypatch.setenv("REPLAY_ORIGIN", "off")  # said on purpose
    assert WebSettings().idle() == []
    monkeypatch.setenv("WEB_HOST", "127.0.0.1")
    monkeypatch.delenv("REPLAY_ORIGIN")
    assert WebSettings().idle() == []
