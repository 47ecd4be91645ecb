"""`dla status`'s service states, against real sockets on 127.0.0.1: a service that takes the
connection and does not answer in time is "not answering", never "down"; nothing listening is
"down"; no port file is "unknown"."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.supervisor.cli.browse import health
from services.supervisor.cli.stack_client import CliSettings, StackClient
from testkit.httpserver import FixtureServer, Reply


@pytest.fixture
def mute() -> Iterator[int]:
    """A port that takes connections (the kernel's backlog) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield sock.getsockname()[1]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_each_state_is_told_apart(tmp_path: Path, mute: int) -> None:
    with FixtureServer() as ok, FixtureServer() as sick:
        ok.routes["/healthz"] = Reply(b"{}", 200)
        sick.routes["/healthz"] = Reply(b"{}", 503)
        run = tmp_path / "run"
        run.mkdir()
        (run / "writer.port").write_text(str(ok.port))
        (run / "poller.port").write_text(str(mute))
        (run / "archiver.port").write_text(str(closed_port()))
        (run / "media.port").write_text(str(sick.port))
        settings = CliSettings(
            data_dir=tmp_path, web_url=f"http://127.0.0.1:{closed_port()}", cli_timeout_seconds=1
        )
        found = health(StackClient(settings))
    assert found == {
        "writer": "up",
        "poller": "not answering (no answer in 1 s)",
        "archiver": "down",
        "media": "unhealthy (503)",
        "web": "down",
    }


def test_a_missing_port_file_is_unknown(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    settings = CliSettings(data_dir=tmp_path, web_url=f"http://127.0.0.1:{closed_port()}")
    assert health(StackClient(settings))["writer"] == "unknown"


def test_a_service_stopped_by_a_refused_setting_says_which(tmp_path: Path) -> None:
    from shared.setting_names import StartReport, record_report

    why = "POLL_INTERVAL_SECONDS='abc': Input should be a valid number (the poller cannot start)"
    record_report(tmp_path, "poller", StartReport(refused=[why]))
    settings = CliSettings(data_dir=tmp_path, web_url=f"http://127.0.0.1:{closed_port()}")
    states = health(StackClient(settings))
    assert states["poller"] == f"stopped at start, setting refused: {why}"
    assert states["writer"] == "unknown"


def test_each_feed_says_when_it_answered_or_since_when_it_fails() -> None:
    from services.supervisor.cli.browse import feed_state

    answered = {"ok": True, "last_success": "2026-11-30T14:47:28.2Z"}
    failing = {
        "ok": False, "failing_since": "2026-11-30T14:46:48.1Z", "failures": 5,
        "error": "http_status: HTTP 404 from https://other.example/posts.rss",
    }  # fmt: skip
    assert feed_state(answered) == "ok · answered 2026-11-30 14:47:28Z"
    assert feed_state(failing) == (
        "failing since 2026-11-30 14:46:48Z, 5 poll(s): http_status: HTTP 404 from"
        " https://other.example/posts.rss"
    )
    waiting = failing | {"wait_until": "2026-11-30T15:46:48.1Z", "error": "http_status: 429"}
    assert feed_state(waiting) == (
        "failing since 2026-11-30 14:46:48Z, 5 poll(s): http_status: 429"
        " · next poll 2026-11-30 15:46:48Z (the forum asked us to wait)"
    )
