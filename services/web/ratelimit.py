"""Rate limits for actions: per client (sliding window) and per link (interval).

Memory is bounded: at most ``max_keys`` clients/links are remembered (oldest forgotten).
With several worker processes (``WEB_WORKERS``) the limits live in the service's main
process and the workers use them through ``SharedLimits`` (a Unix socket), so a client's
limit holds whichever worker answers it.
"""

from __future__ import annotations

import contextlib
import math
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from multiprocessing.managers import BaseManager
from typing import Protocol, cast


class RateLimit(Protocol):
    """What the actions need of a limit."""

    def check(self, key: str) -> int:
        """0 if one more event is allowed now (and counts it), else seconds to wait."""
        ...

    def undo(self, key: str) -> None:
        """Forget the last counted event of a key (the action was not taken after all)."""
        ...


class SlidingWindow:
    """At most ``limit`` events per ``window`` seconds per key (thread-safe)."""

    def __init__(
        self,
        limit: int,
        window: float,
        max_keys: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.window = window
        self.max_keys = max_keys
        self.clock = clock
        self._events: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def check(self, key: str) -> int:
        """0 if one more event is allowed now (and counts it), else seconds to wait."""
        with self._lock:
            now = self.clock()
            events = self._events.pop(key, None) or deque()
            while events and events[0] <= now - self.window:
                events.popleft()
            self._events[key] = events
            while len(self._events) > self.max_keys:
                self._events.popitem(last=False)
            if len(events) >= self.limit:
                return max(1, math.ceil(events[0] + self.window - now))
            events.append(now)
            return 0

    def undo(self, key: str) -> None:
        """Forget the last counted event of a key (the action was not taken after all)."""
        with self._lock:
            events = self._events.get(key)
            if events:
                events.pop()


class SharedLimits:
    """Limits one process keeps, served to others over a Unix socket at ``address``
    (a multiprocessing manager: each call is one round trip, authenticated by ``authkey``,
    a random key the serving process hands to its workers)."""

    def __init__(self, windows: dict[str, SlidingWindow], address: str) -> None:
        self.address = address
        self.authkey = secrets.token_bytes(32)
        manager: type[BaseManager] = type("LimitsServer", (BaseManager,), {})  # own registry
        for name, window in windows.items():
            manager.register(name, callable=_constant(window))
        self._server = manager(address=address, authkey=self.authkey).get_server()
        self._thread = threading.Thread(target=self._serve, name="web-limits", daemon=True)

    def start(self) -> None:
        """Serve in a thread of this process."""
        self._thread.start()

    def _serve(self) -> None:
        with contextlib.suppress(SystemExit):  # how the manager's server says it is done
            self._server.serve_forever()

    def stop(self) -> None:
        """Stop serving (the thread ends within a second)."""
        self._server.stop_event.set()  # type: ignore[attr-defined]
        self._thread.join(timeout=5)
        self._server.listener.close()  # type: ignore[attr-defined]  # removes the socket file

    @staticmethod
    def connect(address: str, authkey: bytes, names: Iterable[str]) -> dict[str, RateLimit]:
        """The named limits as served at ``address`` (calls block for one round trip)."""
        manager: type[BaseManager] = type("LimitsClient", (BaseManager,), {})
        names = list(names)
        for name in names:
            manager.register(name)
        client = manager(address=address, authkey=authkey)
        client.connect()
        return {name: cast(RateLimit, getattr(client, name)()) for name in names}


def _constant(window: SlidingWindow) -> Callable[[], SlidingWindow]:
    return lambda: window
