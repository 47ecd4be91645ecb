"""A real writer process (``python -m services.writer``) for integration tests."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nats.js.errors
from nats.js import JetStreamContext

from services.supervisor.children import Child
from services.writer.puller import WRITER_CONSUMERS
from shared import bus
from shared.errors import BusError
from shared.messages import Message
from testkit.stack_env import own_engines_env
from testkit.waiting import wait_for
from testkit.writer_harness import SUBJECT

REPO = Path(__file__).resolve().parents[1]


@dataclass
class LiveWriter:
    """Start, kill -9, SIGTERM and query one writer process."""

    data_dir: Path
    nats_url: str
    env: dict[str, str] = field(default_factory=dict)
    child: Child | None = None
    starts: int = 0

    @property
    def db_path(self) -> Path:
        return self.data_dir / "archive.sqlite3"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "writer.log"

    @property
    def port_file(self) -> Path:
        return self.data_dir / "run" / "writer.port"

    def full_env(self) -> dict[str, str]:
        base = own_engines_env()
        base.update(
            DATA_DIR=str(self.data_dir),
            NATS_URL=self.nats_url,
            BACKUP_INTERVAL_SECONDS="0",
            METRICS_PORT="0",
            SCHEDULER_INTERVAL_SECONDS="0.2",
            MEDIA_JOBS_ENABLED="false",  # the writer process tests count capture jobs
        )
        base.update(self.env)
        return base

    def start(self, timeout: float = 30) -> LiveWriter:
        self.port_file.unlink(missing_ok=True)
        argv = [sys.executable, "-m", "services.writer"]
        self.child = Child("writer", argv, self.full_env(), self.log_path, cwd=REPO).start()
        self.starts += 1
        self.wait_for(lambda: self.port_file.exists() and self.db_path.exists(), timeout, "start")
        return self

    def kill9(self) -> None:
        assert self.child is not None and self.child.proc is not None
        self.child.signal(signal.SIGKILL)
        self.child.proc.wait(10)
        self.child.stop()

    def stop(self) -> int | None:
        assert self.child is not None
        return self.child.stop(timeout=30)

    def close(self) -> None:
        """Make sure the process is gone (SIGTERM, then SIGKILL); safe to call twice."""
        if self.child is not None and self.child.alive():
            self.child.stop(timeout=5)

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{int(self.port_file.read_text())}"

    def query(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        if not self.db_path.exists():
            return []
        conn = sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, timeout=10)
        try:
            return [tuple(r) for r in conn.execute(sql, args)]
        except sqlite3.OperationalError:  # the schema is not created yet
            return []
        finally:
            conn.close()

    def count(self, table: str) -> int:
        rows = self.query(f"SELECT count(*) FROM {table}")
        return int(rows[0][0]) if rows else 0

    def wait_for(self, predicate: Callable[[], Any], timeout: float, what: str) -> Any:
        """predicate()'s first true answer; fails with the writer's log when `what` did not
        happen in time, or at once when the writer died."""

        def log_tail() -> str:
            path = self.log_path
            return path.read_text(errors="replace")[-3000:] if path.exists() else ""

        return wait_for(
            predicate,
            timeout,
            f"writer: {what}",
            interval=0.02,
            give_up=lambda: self.child is not None and not self.child.alive(),
            explain=log_tail,
        )


async def writer_idle(nats_url: str) -> bool:
    """True when the writer's consumers have nothing pending or unacknowledged (asked over
    one connection: a connection each made a poll ~11 ms of CPU, waits poll 20 times a
    second)."""
    nc = await bus.connect(nats_url, "test-probe")
    try:
        js = nc.jetstream()
        return all([await consumer_idle(js, c.stream.name, c.durable) for c in WRITER_CONSUMERS])
    finally:
        await nc.close()


async def publish_all(nats_url: str, messages: Iterable[Message], chunk: int = 100) -> None:
    """Publish every message (with its msg id) and wait until JetStream stored each, `chunk`
    at a time (500 at once passed bus.publish's 5 s ack bound at load 8)."""
    nc = await bus.connect(nats_url, "test-publisher")
    js = nc.jetstream()
    try:
        await bus.ensure_streams(js)
        batch: list[Message] = []
        for m in messages:
            batch.append(m)
            if len(batch) >= chunk:
                await asyncio.gather(*(_stored(js, x) for x in batch))
                batch = []
        await asyncio.gather(*(_stored(js, x) for x in batch))
    finally:
        await nc.close()


async def _stored(js: JetStreamContext, message: Message, attempts: int = 3) -> None:
    """bus.publish, again when its ack did not come within its 5 s (at load 6-10 a chunk's
    acks once did not): the message id makes JetStream store a message sent twice once."""
    for attempt in range(attempts):
        try:
            await bus.publish(js, SUBJECT[type(message).__name__], message)
            return
        except BusError:
            if attempt == attempts - 1:
                raise


async def consumer_idle(js: JetStreamContext, stream: str, durable: str) -> bool:
    """True when a consumer has nothing pending and nothing unacknowledged; False while it
    does not exist yet (a service makes its consumers once it is up: a writer after
    migrating its database, which takes seconds on a loaded machine)."""
    try:
        info = await js.consumer_info(stream, durable)
    except nats.js.errors.NotFoundError:
        return False
    return info.num_pending == 0 and info.num_ack_pending == 0
