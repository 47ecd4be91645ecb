"""How each watched feed is doing, as the owner asks (`dla status`, the poller's /healthz): when
it last answered, and since when and why it fails. A feed that answers "not modified" (or the
same body) has answered: a quiet forum is a healthy one."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

ERROR_CHARS = 300
"""How much of a failure's message is kept."""


@dataclass
class FeedHealth:
    """One feed's last answer and its failing streak."""

    last_success: datetime | None = None
    """When the feed last answered with a feed (new posts or none)."""
    failing_since: datetime | None = None
    """The first failed poll since the last success (None: not failing)."""
    failures: int = 0
    """Failed polls since the last success."""
    error: str | None = None
    """The last failure: its reason and message."""

    def succeeded(self, now: datetime) -> None:
        self.last_success, self.failing_since, self.failures, self.error = now, None, 0, None

    def failed(self, reason: str, message: str, now: datetime) -> None:
        if self.failing_since is None:
            self.failing_since = now
        self.failures += 1
        self.error = f"{reason}: {message}"[:ERROR_CHARS]

    def as_json(self) -> dict[str, object]:
        """{"ok", "last_success", "failing_since", "failures", "error"}; `ok` is false while
        the feed fails (before its first poll: true, nothing is known against it)."""
        return {
            "ok": self.failing_since is None,
            "last_success": _iso(self.last_success),
            "failing_since": _iso(self.failing_since),
            "failures": self.failures,
            "error": self.error,
        }


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat().replace("+00:00", "Z")
