"""What the running web app holds: settings, the read-only database, NATS, S3, rate limits."""

from __future__ import annotations

from dataclasses import dataclass, field

from fastapi import Request
from nats.aio.client import Client

from services.web.database import ReadDB
from services.web.ratelimit import RateLimit, SlidingWindow
from services.web.replay.site import ReplaySite, replay_site
from services.web.settings import WebSettings
from shared.links.policy import DomainPolicy
from shared.s3 import ObjectStore


@dataclass
class WebState:
    """Shared by every request (one per app)."""

    settings: WebSettings
    db: ReadDB
    policy: DomainPolicy
    per_client: RateLimit
    per_link: RateLimit
    nc: Client | None = None
    """NATS, for commands; None (or disconnected) means actions answer 503."""
    store: ObjectStore | None = None
    """The bucket as the services reach it (health, proxied artifacts, reader view)."""
    signer: ObjectStore | None = None
    """Signs artifact links for the address browsers use (S3_PUBLIC_ENDPOINT, if set)."""
    cache: dict[str, tuple[float, object]] = field(default_factory=dict)
    """Short-lived cached answers (stats)."""
    replay: ReplaySite | None = None
    """Where captures are replayed (None: no replay here)."""

    @classmethod
    def of(cls, settings: WebSettings, limits: dict[str, RateLimit] | None = None) -> WebState:
        """The state of one app; ``limits`` (per_client, per_link) when another process
        keeps them (worker processes), else this process's own."""
        if limits is None:
            limits = dict(rate_limits(settings))
        return cls(
            settings=settings,
            db=ReadDB(settings.db_path, settings.db_pool_size),
            policy=settings.domain_policy(),
            per_client=limits["per_client"],
            per_link=limits["per_link"],
            replay=replay_site(settings),
        )


def rate_limits(settings: WebSettings) -> dict[str, SlidingWindow]:
    """The actions' limits: submissions + re-archives per client, re-archives per link."""
    return {
        "per_client": SlidingWindow(settings.actions_per_client, settings.actions_window_seconds),
        "per_link": SlidingWindow(1, max(settings.rearchive_interval_seconds, 0.001)),
    }


async def web_state(request: Request) -> WebState:
    """The app's state (FastAPI dependency; async, so FastAPI does not run it in its thread
    pool: a thread hop per request)."""
    state: WebState = request.app.state.web
    return state
