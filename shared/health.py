"""What each service's /healthz checks: every dependency it needs, each within a timeout.

A check returns details with an ``ok`` flag; ``all_of`` runs several at once and is ok only
when each of them answered ok in time (a hung dependency counts as down, named in the reply).
"""

from __future__ import annotations

import asyncio

from nats.aio.client import Client

from shared.errors import StorageError
from shared.observability import HealthCheck
from shared.settings import CommonSettings

CHECK_TIMEOUT_S = 3.0
"""Longest wait for one dependency before /healthz calls it down."""


def nats_check(nc: Client) -> HealthCheck:
    """Ok while the NATS connection is up."""

    async def check() -> dict[str, object]:
        return {"ok": nc.is_connected, "nats": "connected" if nc.is_connected else "disconnected"}

    return check


def s3_check(settings: CommonSettings) -> HealthCheck:
    """Ok when the bucket answers a HEAD request."""
    # imported here: the poller, which has no S3, imports this module for its NATS check,
    # and the S3 client need not be loaded there (docs/operations.md)
    from shared.s3 import ObjectStore

    async def check() -> dict[str, object]:
        try:
            async with ObjectStore(settings) as store:
                await store.ping()
        except StorageError as exc:
            return {"ok": False, "s3": str(exc)[:300]}
        return {"ok": True, "s3": "ok"}

    return check


def all_of(*checks: HealthCheck, timeout: float = CHECK_TIMEOUT_S) -> HealthCheck:
    """One check that runs every check concurrently, each bounded by timeout."""

    async def bounded(check: HealthCheck) -> dict[str, object]:
        try:
            return await asyncio.wait_for(check(), timeout)
        except TimeoutError:
            name = _name(check)
            return {"ok": False, name: f"no answer within {timeout:g}s"}
        except Exception as exc:
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}

    async def check() -> dict[str, object]:
        results = await asyncio.gather(*(bounded(c) for c in checks))
        merged: dict[str, object] = {}
        for result in results:
            merged.update(result)
        merged["ok"] = all(bool(r.get("ok", True)) for r in results)
        return merged

    return check


def _name(check: HealthCheck) -> str:
    """What a check is about: "s3" for s3_check's check, "hung" for hung_check."""
    qualname = getattr(check, "__qualname__", "check")
    parts = qualname.split(".<locals>.")
    name = parts[-1] if parts[-1] != "check" or len(parts) == 1 else parts[-2].split(".")[-1]
    return name.removesuffix("_check") or "check"
