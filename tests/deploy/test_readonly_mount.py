"""The web reads the database from a real read-only bind mount while the writer writes it.

This is the layout of docker-compose.yml: the writer owns the volume read-write, the web
mounts it read-only and opens the database `mode=ro`. SQLite reads a WAL database on a
read-only mount as long as the writer keeps it open (the writer creates the `-shm` index the
readers map), and a reader sees every commit. Needs root (CAP_SYS_ADMIN) to bind-mount;
skipped elsewhere.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from services.supervisor.children import free_ports
from services.supervisor.stack import Stack
from testkit.live_writer import publish_all
from testkit.stack_env import ENGINES_GRACE_S, own_engines_env
from testkit.writer_harness import occ, post

pytestmark = pytest.mark.integration


@pytest.fixture
def readonly_view(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(read-write dir, the same dir bind-mounted read-only)."""
    rw, ro = tmp_path / "rw", tmp_path / "ro"
    rw.mkdir()
    ro.mkdir()
    bind = subprocess.run(["mount", "--bind", str(rw), str(ro)], capture_output=True)
    if bind.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {bind.stderr.decode().strip()}")
    try:
        remount = subprocess.run(
            ["mount", "-o", "remount,ro,bind", str(ro)], capture_output=True, text=True
        )
        if remount.returncode != 0:
            pytest.skip(f"cannot remount read-only: {remount.stderr.strip()}")
        with pytest.raises(OSError):
            (ro / "probe").write_text("x")
        yield rw, ro
    finally:
        subprocess.run(["umount", "-l", str(ro)], check=False)


def get_json(url: str, timeout: float = 30) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while True:
        try:
            reply = httpx.get(url, timeout=5)
            if reply.status_code == 200 or time.monotonic() > deadline:
                return reply
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.3)


def test_web_reads_a_live_database_on_a_readonly_mount(
    tmp_path: Path, readonly_view: tuple[Path, Path]
) -> None:
    rw, ro = readonly_view
    (web_port,) = free_ports(1)
    env = own_engines_env()
    env.update(ARCHIVE_MODE="all", BACKUP_INTERVAL_SECONDS="0", WEB_PORT=str(web_port))
    stack = Stack(data_dir=tmp_path / "engines", env=env, services=("writer", "web"))
    try:
        stack.start_engines()
        stack.env["DATABASE_PATH"] = str(rw / "archive.sqlite3")
        stack.start_services(
            extra_env={"web": {"DATA_DIR": str(ro), "DATABASE_PATH": str(ro / "archive.sqlite3")}}
        )
        web = f"http://127.0.0.1:{web_port}"
        first = occ("https://www.reddit.com/r/a/comments/1/one/")
        asyncio.run(publish_all(stack.env["NATS_URL"], [post("g1", first)]))
        reply = get_json(f"{web}/links/1.json")
        assert reply.status_code == 200, reply.text
        assert "reddit.com/r/a/comments/1" in reply.text

        # a later commit by the writer is visible through the read-only mount
        second = occ("https://www.reddit.com/r/a/comments/2/two/")
        asyncio.run(publish_all(stack.env["NATS_URL"], [post("g2", second)]))
        reply = get_json(f"{web}/links/2.json")
        assert reply.status_code == 200, reply.text
        assert "reddit.com/r/a/comments/2" in reply.text
        assert not (ro / "probe").exists()
    finally:
        stack.stop(engines_grace_s=ENGINES_GRACE_S)
