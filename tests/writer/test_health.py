"""What the writer's /healthz says about its database between two write attempts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

from services.writer.db import open_db
from services.writer.service import Writer
from services.writer.settings import WriterSettings


async def test_an_idle_scheduler_run_does_not_clear_a_write_failure(tmp_path: Path) -> None:
    # On a full disk the message batches fail while a scheduler run with nothing to
    # dispatch writes nothing and succeeds: /healthz must keep saying the database is down
    # (it flickered to ok every scheduler interval; CI's disk-full test missed the 503).
    writer = Writer(WriterSettings(data_dir=tmp_path))
    writer._conn = await writer.db(open_db, writer.settings.db_path)
    try:
        assert (await writer.health())["ok"] is True
        writer._db_error = "OperationalError: database or disk is full"
        ctx = SimpleNamespace(js=None, stop=asyncio.Event())
        await writer.schedule_once(ctx)  # type: ignore[arg-type]
        health = await writer.health()
        assert health["ok"] is False
        assert health["db"] == "OperationalError: database or disk is full"
    finally:
        await writer.db(writer.conn.close)
        writer._executor.shutdown(wait=True)
