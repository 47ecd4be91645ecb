"""In-memory rate limits for actions: per client (sliding window) and per link (interval).

Memory is bounded: at most ``max_keys`` clients/links are remembered (oldest forgotten).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable


class SlidingWindow:
    """At most ``limit`` events per ``window`` seconds per key."""

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

    def check(self, key: str) -> int:
        """0 if one more event is allowed now (and counts it), else seconds to wait."""
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
        events = self._events.get(key)
        if events:
            events.pop()
