"""/healthz checks: every dependency within a timeout; a hung or absent one reads as down."""

from __future__ import annotations

import asyncio

from services.supervisor.children import free_ports
from shared.health import all_of, s3_check
from shared.s3 import ObjectStore
from shared.settings import CommonSettings


async def test_a_hung_check_is_down_within_the_timeout() -> None:
    async def fine() -> dict[str, object]:
        return {"ok": True, "db": "ok"}

    async def hung_check() -> dict[str, object]:
        await asyncio.sleep(3600)
        return {"ok": True}

    result = await all_of(fine, hung_check, timeout=0.2)()
    assert result["ok"] is False
    assert result["db"] == "ok" and "0.2s" in str(result["hung"])


async def test_a_raising_check_is_down() -> None:
    async def broken() -> dict[str, object]:
        raise RuntimeError("boom")

    result = await all_of(broken)()
    assert result["ok"] is False and "boom" in str(result["error"])


async def test_s3_check_says_down_when_nothing_listens() -> None:
    (port,) = free_ports(1)
    settings = CommonSettings(s3_endpoint=f"http://127.0.0.1:{port}", s3_bucket="nothing-here")
    result = await all_of(s3_check(settings), timeout=20)()
    assert result["ok"] is False and "S3" in str(result["s3"])


async def test_s3_check_is_ok_with_a_real_bucket(s3_env: dict[str, str]) -> None:
    settings = CommonSettings.model_validate({k.lower(): v for k, v in s3_env.items()})
    async with ObjectStore(settings) as store:
        await store.ensure_bucket()
    result = await all_of(s3_check(settings), timeout=20)()
    assert result["ok"] is True, result
