"""How each watched feed is doing, kept by the poller: when it last answered, and since when
and why it fails. A feed that answers "not modified" (or the same body) has answered: a quiet
forum is a healthy one. What the owner sees of it: shared/feed_health.py (the console, `dla
status`) and the poller's /healthz."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from shared.feed_health import FeedHealthReport
from shared.logs import redact

ERROR_CHARS = 300
"""How much of a failure's message is kept."""


@dataclass
class FeedHealth:
    """One feed's last answer and its failing streak."""

    last_success: datetime | None = None
    failing_since: datetime | None = None
    failures: int = 0
    error: str | None = None
    polled_at: datetime | None = None

    def succeeded(self, now: datetime) -> None:
        self.last_success, self.failing_since, self.failures, self.error = now, None, 0, None
        self.polled_at = now

    def failed(self, reason: str, message: str, now: datetime) -> None:
        if self.failing_since is None:
            self.failing_since = now
        self.failures += 1
        self.error = f"{reason}: {message}"[:ERROR_CHARS]
        self.polled_at = now

    def resume(self, stored: FeedHealthReport) -> None:
        """Take up a report an earlier poller stored (a restart does not make a failing feed
        look as if it had just begun to fail, nor hide since when it has not answered)."""
        self.last_success, self.failing_since = stored.last_success, stored.failing_since
        self.failures, self.polled_at = stored.failures, stored.polled_at
        self.error = stored.error

    def report(self, feed_url: str, wait_until: float | None = None) -> FeedHealthReport | None:
        """What the owner is shown (the URL and the error as the logs show them: passwords
        and secrets masked; `wait_until`, Unix time, when the forum asked us to wait); None
        before the first poll."""
        if self.polled_at is None:
            return None
        waits = None
        if wait_until is not None and wait_until > self.polled_at.timestamp():
            waits = datetime.fromtimestamp(wait_until, UTC)
        return FeedHealthReport(
            feed=redact(feed_url),
            ok=self.failing_since is None,
            polled_at=self.polled_at,
            last_success=self.last_success,
            failing_since=self.failing_since,
            failures=self.failures,
            error=None if self.error is None else redact(self.error),
            wait_until=waits,
        )
