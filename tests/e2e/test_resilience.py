"""Bad infrastructure: S3 down while a worker uploads, NATS restarted under running services.
Nothing is lost, nothing is acknowledged before its effect was stored, every service survives.
"""

from __future__ import annotations

import httpx
import pytest

from testkit.httpserver import FixtureServer, Reply
from tests.e2e.conftest import Forum, Running

pytestmark = pytest.mark.integration


def page(web: FixtureServer, name: str) -> str:
    web.routes[f"/{name}"] = Reply(f"<p>{name}</p>".encode())
    return f"{web.base}/{name}"


def pids(running: Running) -> dict[str, int]:
    return {name: sp.child.pid for name, sp in running.stack.procs.items() if sp.child.alive()}


def nak_count(running: Running) -> float:
    text = httpx.get(f"http://127.0.0.1:{running.metrics_port('archiver')}/metrics").text
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("dla_capture_jobs_total{") and 'outcome="nak"' in line
    )


def test_s3_down_during_upload_retries_and_loses_nothing(
    forum: Forum, outside_web: FixtureServer, running: Running
) -> None:
    forum.add(1, f'<a href="{page(outside_web, "one")}">one</a>')
    running.wait_for(lambda: running.archived("/one"), 90, "first link archived")
    before = pids(running)

    running.stack.stop_s3()
    forum.add(2, f'<a href="{page(outside_web, "two")}">two</a>')
    running.wait_for(lambda: nak_count(running) >= 1, 90, "the archiver to nak the job")
    running.stack.start_s3_again()

    def kinds() -> set[str]:
        link = running.archived("/two")
        return {a["kind"] for a in link["artifacts"]} if link else set()

    # (artifacts are recorded one by one: wait for both rather than catch the first alone)
    running.wait_for(lambda: kinds() >= {"raw_response", "headers"}, 120, "second link archived")
    assert pids(running) == before, "every service kept running"


def test_nats_restart_under_running_services(
    forum: Forum, outside_web: FixtureServer, running: Running
) -> None:
    forum.add(1, f'<a href="{page(outside_web, "a")}">a</a>')
    running.wait_for(lambda: running.archived("/a"), 90, "first link archived")
    before = pids(running)

    running.stack.restart_nats()
    forum.add(2, f'<a href="{page(outside_web, "b")}">b</a>')
    running.wait_for(lambda: running.archived("/b"), 120, "link posted after the restart")
    assert pids(running) == before, "services reconnected instead of dying"
    # Nothing doubled: one post row per post, one link row per link.
    assert running.query("SELECT count(*) FROM discourse_posts") == [(2,)]
    assert running.query("SELECT count(*) FROM links") == [(2,)]
