"""Queued S3 removals against a real SeaweedFS: a capture whose page declined loses exactly
its own objects (the keys queued), the link's other captures stay; a taken-down link loses
everything under its prefix."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from services.writer import moderation, removals
from services.writer.db import open_db
from services.writer.settings import WriterSettings
from shared.s3 import ObjectStore
from testkit.writer_harness import Harness, occ, post


async def test_queued_keys_go_and_a_takedown_takes_the_whole_prefix(
    s3_env: dict[str, str], tmp_path: Path
) -> None:
    values = {k.lower(): v for k, v in s3_env.items()}
    settings = WriterSettings.model_validate(
        values | {"data_dir": tmp_path, "s3_prefix": f"removals-{uuid.uuid4().hex}/"}
    )
    conn = open_db(tmp_path / "archive.sqlite3")
    Harness(conn).apply(
        post("g1", occ("https://x.com/a/status/1"), occ("https://x.com/b/status/2"))
    )
    one, two = f"{settings.s3_prefix}1/", f"{settings.s3_prefix}2/"
    kept, declined, other = f"{one}s1/screenshot/s.png", f"{one}s2/x/post.json", f"{two}s3/d.html"

    async def with_conn(fn: Any, *args: Any) -> Any:
        return fn(conn, *args)

    async with ObjectStore(settings) as store:
        await store.ensure_bucket()
        for key in (kept, declined, other):
            await store.put_bytes(key, b"x", "text/plain")
        moderation.remove_objects(conn, 1, [declined], "2026-01-01T00:00:00Z")
        conn.execute("UPDATE links SET taken_down_at = '2026-01-01T00:00:00Z' WHERE id = 2")
        moderation.remove_objects(conn, 2, [], "2026-01-01T00:00:00Z")
        assert await removals.remove_pending(with_conn, settings) == 2
        assert await store.list_keys(one) == [kept]
        assert await store.list_keys(two) == []
    assert moderation.pending_removals(conn) == []
    conn.close()
