"""Every provisioned dashboard panel returns data from a real Prometheus after a fixture run."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import httpx
import pytest

from testkit.httpserver import FixtureServer, Reply
from testkit.mediaserver import make_clip
from testkit.prometheus import SCRAPE_SECONDS, Prometheus
from testkit.waiting import wait_for
from tests.e2e.conftest import Forum, Running

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
ARTICLE = b"<html><head><title>Watched</title></head><body><p>Some text.</p></body></html>"


def boards() -> dict[str, Any]:
    spec = importlib.util.spec_from_file_location("grafana_build", REPO / "deploy/grafana/build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.BOARDS)


def metrics_targets(running: Running) -> list[str] | None:
    """host:port of each service's /metrics, once every service has written its port file."""
    try:
        return [
            f"127.0.0.1:{running.metrics_port(s)}"
            for s in ("poller", "writer", "archiver", "media")
        ]
    except (OSError, ValueError):  # not written yet, or being written
        return None


def test_every_dashboard_panel_has_data(
    tmp_path: Path, forum: Forum, outside_web: FixtureServer, running: Running
) -> None:
    outside_web.routes["/watched.html"] = Reply(ARTICLE, headers={"Content-Type": "text/html"})
    clip = make_clip(tmp_path / "clip.mp4", seconds=1)
    outside_web.routes["/clip.mp4"] = Reply(
        clip.read_bytes(), headers={"Content-Type": "video/mp4"}
    )
    forum.add(
        301,
        f'<p><a href="{outside_web.base}/watched.html">a page</a>, '
        f'<a href="{outside_web.base}/gone.html">a dead one</a> and '
        f'<a href="{outside_web.base}/clip.mp4">a video</a></p>',
    )
    # Prometheus starts before the run: it scrapes new targets only ~5 s after it starts (its
    # target discovery sends updates at most every 5 s), which the run's waits overlap.
    services = running.wait_for(lambda: metrics_targets(running), 60, "every metrics port")
    web_hostport = running.web.removeprefix("http://")
    prom = Prometheus(tmp_path / "prometheus", {"services": services, "web": [web_hostport]})
    try:
        running.wait_for(lambda: running.archived("/watched.html"), 90, "the page archived")
        running.wait_for(
            lambda: running.query(
                "SELECT count(*) FROM archive_jobs WHERE status NOT IN ('queued', 'running')"
            )[0][0] >= 4,
            120, "the three capture jobs and the media job ended",
        )  # fmt: skip
        for path in ("/", "/index.json", "/no-such-page"):
            httpx.get(f"{running.web}{path}", timeout=5)
        wait_for(
            lambda: (up := prom.targets_up()) and len(up) == 5 and set(up.values()) == {"up"},
            30, "every target scraped",
            interval=SCRAPE_SECONDS, explain=lambda: str(prom.targets_up()),
        )  # fmt: skip

        def problems() -> list[str]:
            found: list[str] = []
            for uid, (_, panels) in boards().items():
                for title, expr, _unit in panels:
                    answer = prom.query(expr)
                    if answer.get("status") != "success":
                        found.append(f"{uid}: {title}: invalid: {answer.get('error')}")
                    elif not answer["data"]["result"]:
                        found.append(f"{uid}: {title}: no series for {expr}")
            return found

        # rate() needs two samples of a series: a panel may have data only a few scrapes later
        wait_for(
            lambda: not problems(), 30, "data in every panel",
            interval=SCRAPE_SECONDS, explain=lambda: "\n".join(problems()),
        )  # fmt: skip
    finally:
        prom.stop()
