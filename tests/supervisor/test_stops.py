"""`dla up` always stops: random stop moments, the signals people and service managers send.

`make test` runs a small sample (DLA_STOP_RUNS, default 3); `make chaos` runs 50 and prints
the figures recorded in docs/reliability.md. Real engines, real services, a fixture forum
whose posts keep the archiver capturing.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from services.supervisor.children import free_ports
from shared import processes
from testkit.forum import Post, posts_rss
from testkit.httpserver import FixtureServer, Reply
from testkit.stack_env import own_engines_env

pytestmark = pytest.mark.integration

RUNS = int(os.environ.get("DLA_STOP_RUNS", "3"))
STOP_LIMIT_S = 15.0
KILL9_LIMIT_S = 5.0
DLA = str(Path(sys.executable).parent / "dla")
MODES = ("term-dla", "term-make-group", "ctrl-c-twice")


def marked(mark: str) -> list[int]:
    """Live processes started under this test's marker (found through /proc/*/environ)."""
    needle = f"DLA_STOP_MARK={mark}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if needle in Path(f"/proc/{entry}/environ").read_bytes().split(b"\0"):
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(entry))
        except OSError:
            continue
    return found


@dataclass
class Site:
    """A forum whose posts link to slow-ish pages on another host, to keep captures going."""

    forum: FixtureServer
    web: FixtureServer
    posts: list[Post]

    def add_posts(self, n: int) -> None:
        for _ in range(n):
            i = len(self.posts) + 1
            links = "".join(f'<a href="{self.web.base}/p/{i}/{j}">p{j}</a> ' for j in range(4))
            self.posts.append(Post(i, i, f"<p>{links}</p>"))


def slow_page(_: object) -> Reply:
    time.sleep(random.uniform(0.1, 1.5))
    return Reply(b"<html><head><title>page</title></head><body>text</body></html>")


@pytest.fixture
def site() -> Iterator[Site]:
    with FixtureServer("127.0.0.1") as forum, FixtureServer("127.0.0.2") as web:
        s = Site(forum, web, [])
        forum.routes["/posts.rss"] = lambda _: Reply(
            posts_rss(forum.base, s.posts), headers={"Content-Type": "application/rss+xml"}
        )
        web.routes.update({f"/p/{i}/{j}": slow_page for i in range(1, 400) for j in range(4)})
        yield s


def up_env(data_dir: Path, site: Site, mark: str) -> dict[str, str]:
    env = own_engines_env()
    env.update(
        DATA_DIR=str(data_dir),
        RSS_URL=f"{site.forum.base}/posts.rss",
        POLL_INTERVAL_SECONDS="0.5",
        ALLOW_PRIVATE_TARGETS="true",
        ARCHIVE_MODE="all",
        WEB_PORT=str(free_ports(1)[0]),
        DLA_STOP_MARK=mark,
    )
    return env


def start(mode: str, env: dict[str, str], tmp: Path, log: Path) -> subprocess.Popen[bytes]:
    """`dla up`, or `make up` (a one-rule Makefile) as its own process group, like a shell job."""
    out = log.open("ab")
    if mode == "term-dla":
        argv = [DLA, "up"]
    else:
        (tmp / "Makefile").write_text(f"up:\n\t{DLA} up\n")
        argv = ["make", "-s", "-C", str(tmp), "up"]
    return subprocess.Popen(argv, env=env, stdout=out, stderr=out, start_new_session=True)


def send_stop(mode: str, proc: subprocess.Popen[bytes], rng: random.Random) -> None:
    if mode == "term-dla":
        proc.send_signal(signal.SIGTERM)
    elif mode == "term-make-group":
        os.killpg(proc.pid, signal.SIGTERM)
    else:  # Ctrl-C twice at the terminal: SIGINT to the foreground group, then again
        os.killpg(proc.pid, signal.SIGINT)
        time.sleep(rng.uniform(0.2, 4.0))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)


def test_dla_up_stops_every_time(tmp_path: Path, site: Site) -> None:
    rng = random.Random(int(os.environ.get("DLA_STOP_SEED", "15")))
    data_dir = tmp_path / "data"
    results: list[dict[str, Any]] = []
    for run in range(RUNS):
        mode = MODES[run % len(MODES)]
        mark = uuid.uuid4().hex
        site.add_posts(3)
        delay = rng.uniform(0.0, 14.0)
        proc = start(mode, up_env(data_dir, site, mark), tmp_path, tmp_path / f"up-{run}.log")
        time.sleep(delay)
        before = len(marked(mark))
        t0 = time.monotonic()
        send_stop(mode, proc, rng)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(STOP_LIMIT_S + 5)
        took = time.monotonic() - t0
        left = marked(mark)
        for pid in left:  # clean up before failing so later runs and tests are not hurt
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        results.append(
            {
                "run": run,
                "mode": mode,
                "after_s": round(delay, 1),
                "procs_before": before,
                "stop_s": round(took, 2),
                "left": len(left),
            }
        )
        log_tail = (tmp_path / f"up-{run}.log").read_text(errors="replace")[-3000:]
        assert not left, f"run {run} ({mode}) left {len(left)} processes\n{log_tail}"
        assert took <= STOP_LIMIT_S, f"run {run} ({mode}) took {took:.1f}s\n{log_tail}"
    stops = [r["stop_s"] for r in results]
    print(json.dumps({"runs": len(results), "max_stop_s": max(stops), "results": results}))
    report = os.environ.get("DLA_STOP_REPORT")
    if report:
        Path(report).write_text(json.dumps(results, indent=1))


def test_kill_9_of_dla_up_leaves_nothing(tmp_path: Path, site: Site) -> None:
    mark = uuid.uuid4().hex
    site.add_posts(5)
    proc = start("term-dla", up_env(tmp_path / "data", site, mark), tmp_path, tmp_path / "up.log")
    deadline = time.monotonic() + 60
    while len(marked(mark)) < 9 and time.monotonic() < deadline:  # dla x2, engines, services
        time.sleep(0.2)
    time.sleep(2)
    assert len(marked(mark)) >= 9
    proc.kill()
    proc.wait()
    t0 = time.monotonic()
    while marked(mark) and time.monotonic() - t0 < KILL9_LIMIT_S:
        time.sleep(0.1)
    left = marked(mark)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, (tmp_path / "up.log").read_text()[-3000:]


def test_a_second_dla_up_on_the_same_data_refuses(tmp_path: Path, site: Site) -> None:
    mark = uuid.uuid4().hex
    env = up_env(tmp_path / "data", site, mark)
    first = start("term-dla", env, tmp_path, tmp_path / "up.log")
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / "data" / "dla.lock").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        second = subprocess.run(
            [DLA, "up"], env=env, capture_output=True, text=True, timeout=30, check=False
        )
        assert second.returncode == 3
        assert "in use by dla up (pid" in second.stderr
        assert "Traceback" not in second.stderr
        assert first.poll() is None
        # the front process, after forking the supervisor, is a small interpreter of its own
        assert "services.supervisor.front" in processes.cmdline(first.pid)
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(STOP_LIMIT_S + 5)
    assert first.returncode == 0
    assert not marked(mark)
    with (tmp_path / "data" / "dla.lock").open("rb") as lock:  # released by the front's exit
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
