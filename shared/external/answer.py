"""What a public archive answered, as one job reports it, and the rules every service's
answers share (rate limits, transient failures)."""

from __future__ import annotations

import httpx

from shared.fetching import retry_after as retry_wait
from shared.messages import ExternalAnswer


def retry_after(response: httpx.Response) -> float | None:
    """The seconds a Retry-After header asks for (seconds or an HTTP date), or None."""
    return retry_wait.seconds(response.headers.get("retry-after", ""))


def transient(name: str, response: httpx.Response) -> ExternalAnswer | None:
    """The answer of a rate limit (429: asked again when the service says) or of a service
    that is down (5xx: asked again later), or None for any other response."""
    code = response.status_code
    if code == 429:
        seconds = retry_after(response)
        after = f"; it asks to wait {seconds:.0f} s" if seconds is not None else ""
        return ExternalAnswer(
            outcome="later",
            retry_after_s=seconds,
            error=f"{name} is rate limiting (HTTP 429){after}",
        )
    if code >= 500:
        return ExternalAnswer(outcome="later", error=f"{name} is unavailable (HTTP {code})")
    return None


def unreachable(name: str, exc: httpx.HTTPError) -> ExternalAnswer:
    """The service could not be reached or did not answer in time: asked again later."""
    return ExternalAnswer(outcome="later", error=f"{name} did not answer")
