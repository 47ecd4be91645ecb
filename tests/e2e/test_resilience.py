"""Bad infrastructure: S3 down while a worker uploads, NATS restarted under running services.
Nothing is lost, nothing is acknowledged before its effect was stored, every service survives.

The two faults hit one stack, one after the other (module-scoped: one start instead of two);
each test's posts and links are its own, each first sees a link archived before its fault,
and the S3 outage ends even when its test fails, so neither leans on the other having passed.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from testkit.httpserver import FixtureServer, Reply
from tests.e2e.conftest import Forum, Running, serving_forum, serving_outside_web, stack_running

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def forum() -> Iterator[Forum]:
    with serving_forum() as f:
        yield f


@pytest.fixture(scope="module")
def outside_web() -> Iterator[FixtureServer]:
    with serving_outside_web() as web:
        yield web


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory, forum: Forum) -> Iterator[Running]:
    with stack_running(tmp_path_factory.mktemp("resilience") / "data", forum, {}) as st:
        yield st


def page(web: FixtureServer, name: str) -> str:
    web.routes[f"/{name}"] = Reply(f"<p>{name}</p>".encode())
    return f"{web.base}/{name}"


def pids(running: Running) -> dict[str, int]:
    return {name: sp.child.pid for name, sp in running.stack.procs.items() if sp.child.alive()}


def nak_count(running: Running) -> float:
    text = running.http.get(f"http://127.0.0.1:{running.metrics_port('archiver')}/metrics").text
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
    naks = nak_count(running)

    running.stack.stop_s3()
    try:
        forum.add(2, f'<a href="{page(outside_web, "two")}">two</a>')
        running.wait_for(lambda: nak_count(running) > naks, 90, "the archiver to nak the job")
    finally:  # the module's next test needs S3 back even when this one failed
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
    forum.add(11, f'<a href="{page(outside_web, "a")}">a</a>')
    running.wait_for(lambda: running.archived("/a"), 90, "first link archived")
    before = pids(running)

    running.stack.restart_nats()
    forum.add(12, f'<a href="{page(outside_web, "b")}">b</a>')
    running.wait_for(lambda: running.archived("/b"), 120, "link posted after the restart")
    assert pids(running) == before, "services reconnected instead of dying"
    # Nothing doubled: one post row per post, one link row per link (every post of the
    # forum so far, each with one link of its own: this module's earlier test's too).
    posted = len(forum.posts)
    assert running.query("SELECT count(*) FROM discourse_posts") == [(posted,)]
    assert running.query("SELECT count(*) FROM links") == [(posted,)]
