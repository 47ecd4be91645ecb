"""The browser's own traffic of one snapshot as a WARC: every request the page made through
the egress proxy and every response it got, written as it completes
(`shared.fetching.warc`: request and response records, `WARC-IP-Address`, the original
headers with cookie and authorization values redacted, bodies as received).

The API the evidence builders use: `TrafficLog(path, budget)`; the proxy `reserve`s room
for each body as it arrives and `add`s each exchange when it ended; `finish(dest)` closes
the file and moves it to dest (the `traffic` plugin's step 7 hook asks for it over the page
socket). A body past the room left in `budget` (`BROWSER_WARC_MAX_MB` for the whole WARC),
or cut at the proxy's per-response cap, is kept up to there and marked
`WARC-Truncated: length`. Records are compressed and hashed in a worker thread, one at a
time, never on the event loop that relays the page's traffic.
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass
from pathlib import Path

from shared.fetching.warc import Exchange, WarcLog

SOFTWARE = "discourse-link-archiver (archiver egress proxy)"


@dataclass(frozen=True)
class TrafficFile:
    """A finished browser WARC."""

    path: Path
    exchanges: int
    truncated: int
    """Exchanges whose body was cut (`WARC-Truncated`)."""


class TrafficLog:
    """One snapshot's browser WARC, being written."""

    def __init__(self, path: Path, budget: int) -> None:
        self.path, self.budget = path, budget
        self.used = 0
        self.truncated = 0
        self._warc: WarcLog | None = None
        self._lock = asyncio.Lock()
        self._closed = False

    @property
    def open(self) -> bool:
        return not self._closed

    def reserve(self, size: int) -> int:
        """How many of the next `size` body bytes may be kept (the rest is cut)."""
        room = max(0, min(size, self.budget - self.used)) if not self._closed else 0
        self.used += room
        return room

    async def add(self, exchange: Exchange) -> None:
        """Write one exchange (in a worker thread; exchanges are written one at a time)."""
        async with self._lock:
            if self._closed:
                return
            if exchange.truncated:
                self.truncated += 1
            await asyncio.to_thread(self._write, exchange)

    def _write(self, exchange: Exchange) -> None:
        if self._warc is None:
            self._warc = WarcLog(self.path, SOFTWARE)
        self._warc.write(exchange)

    async def finish(self, dest: Path) -> TrafficFile | None:
        """Close the WARC and move it to dest; None when the page exchanged nothing. Later
        exchanges are not recorded."""
        async with self._lock:
            self._closed = True
            warc, self._warc = self._warc, None
            if warc is None:
                return None
            exchanges = warc.exchanges
            await asyncio.to_thread(warc.close)
            await asyncio.to_thread(shutil.move, self.path, dest)
        return TrafficFile(dest, exchanges, self.truncated)

    async def discard(self) -> None:
        """The snapshot ended without asking for its WARC: close and delete it."""
        async with self._lock:
            self._closed = True
            warc, self._warc = self._warc, None
            if warc is not None:
                await asyncio.to_thread(warc.close)
            self.path.unlink(missing_ok=True)
