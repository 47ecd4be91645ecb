"""Waiting on a condition with a deadline: the one poll-until helper of the tests and benches.

`poll` asks until the answer is true or the time is up and returns the last answer;
`wait_for` raises when the time is up, naming what did not happen (and whatever `explain`
adds, a log's tail); `until` is `wait_for` for async conditions. A condition that raises one
of `ignore` (a server not answering yet) counts as not yet; `give_up` ends the wait early
(the process that should make it happen died).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
NOT_YET: tuple[type[BaseException], ...] = ()


def _ask(predicate: Callable[[], T | None], ignore: tuple[type[BaseException], ...]) -> T | None:
    try:
        return predicate()
    except ignore:
        return None


def poll(
    predicate: Callable[[], T | None],
    timeout: float,
    *,
    interval: float = 0.05,
    ignore: tuple[type[BaseException], ...] = NOT_YET,
    give_up: Callable[[], bool] | None = None,
) -> T | None:
    """predicate()'s first true answer within `timeout` seconds, else its last answer."""
    deadline = time.monotonic() + timeout
    while True:
        value = _ask(predicate, ignore)
        if value or time.monotonic() >= deadline or (give_up is not None and give_up()):
            return value
        time.sleep(min(interval, max(0.0, deadline - time.monotonic())))


def wait_for(
    predicate: Callable[[], T | None],
    timeout: float,
    what: str,
    *,
    interval: float = 0.05,
    ignore: tuple[type[BaseException], ...] = NOT_YET,
    give_up: Callable[[], bool] | None = None,
    explain: Callable[[], str] | None = None,
) -> T:
    """predicate()'s first true answer; AssertionError when `what` did not happen in time."""
    value = poll(predicate, timeout, interval=interval, ignore=ignore, give_up=give_up)
    if value:
        return value
    more = f"\n{explain()}" if explain is not None else ""
    raise AssertionError(f"{what} did not happen within {timeout:g}s{more}")


async def until(
    predicate: Callable[[], Any],
    timeout: float,
    what: str,
    *,
    interval: float = 0.05,
    ignore: tuple[type[BaseException], ...] = NOT_YET,
) -> Any:
    """wait_for for a condition that may be a coroutine function; the loop keeps running."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            answer = predicate()
            value = await answer if inspect.isawaitable(answer) else answer
        except ignore:
            value = None
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what} did not happen within {timeout:g}s")
        await asyncio.sleep(min(interval, max(0.0, deadline - time.monotonic())))
