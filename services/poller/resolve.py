"""Short links (redd.it, /r/<sub>/s/<id> share links, bit.ly, ...) are resolved by following
their redirects, then the final URL is canonicalised, so the writer decides on where the
link leads (a short link to a non-deletable page is not archived in deletable mode) and one
to a Reddit thread becomes the thread's old.reddit.com link. Every hop passes the capture
target policy, and its request connects to the address that was checked (no second DNS
lookup: no rebinding)."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from urllib.parse import urljoin, urlsplit

import httpx

from services.poller.metrics import SHORT_LINKS
from shared.errors import TargetRefused, TargetUnresolved
from shared.fetching.pinning import pinned_transport
from shared.links.canonical import CanonicalUrl, canonicalize
from shared.messages import LinkOccurrence
from shared.targets import checked_url

log = logging.getLogger(__name__)

METHOD_FALLBACK = {403, 404, 405, 501}


class Resolver:
    """Follows a short link's redirects (HEAD, GET when HEAD is refused) until they reach a
    URL that is no short link itself; a bounded cache remembers the answers."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        allow_private: bool,
        max_hops: int = 8,
        concurrency: int = 8,
        cache_size: int = 10_000,
    ) -> None:
        self.client = client
        self.allow_private = allow_private
        self.max_hops = max_hops
        self.limit = asyncio.Semaphore(concurrency)
        self.cache: OrderedDict[str, str | None] = OrderedDict()
        self.cache_size = cache_size
        self.pins: dict[str, str] = {}
        self._pinned: httpx.AsyncClient | None = None

    def _hop_client(self) -> httpx.AsyncClient:
        """A client like self.client whose connects go to the checked (pinned) addresses."""
        if self._pinned is None:
            self._pinned = httpx.AsyncClient(
                transport=pinned_transport(self.pins),
                timeout=self.client.timeout,
                headers=self.client.headers,
                trust_env=False,
            )
        return self._pinned

    async def aclose(self) -> None:
        """Close the pinned client."""
        if self._pinned is not None:
            await self._pinned.aclose()

    async def _next_hop(self, url: str) -> httpx.Response:
        addresses = await checked_url(url, allow_private=self.allow_private)
        self.pins[(urlsplit(url).hostname or "").lower()] = addresses[0]
        client = self._hop_client()
        resp = await client.head(url, follow_redirects=False)
        if resp.status_code in METHOD_FALLBACK:
            async with client.stream("GET", url, follow_redirects=False) as streamed:
                return streamed
        return resp

    async def final_url(self, url: str) -> str | None:
        """Where url ends up after redirects; None when it cannot be resolved (logged)."""
        if url in self.cache:
            self.cache.move_to_end(url)
            return self.cache[url]
        current: str | None = url
        async with self.limit:
            try:
                for _ in range(self.max_hops):
                    assert current is not None
                    resp = await self._next_hop(current)
                    location = resp.headers.get("location")
                    if not (resp.is_redirect and location):
                        break
                    current = urljoin(current, location)
                    hop = canonicalize(current)
                    if isinstance(hop, CanonicalUrl) and not hop.needs_resolve:
                        break  # a real page: no need to request it from the poller
                else:
                    log.warning("short link %s: more than %d redirects", url, self.max_hops)
                    current = None
            except (httpx.HTTPError, TargetRefused, TargetUnresolved) as exc:
                log.warning("short link %s not resolved: %s", url, exc)
                current = None
                if isinstance(exc, TargetUnresolved | httpx.TransportError):
                    SHORT_LINKS.labels("failed").inc()
                    return None  # not cached: the next post with this link tries again
        SHORT_LINKS.labels("ok" if current else "failed").inc()
        self.cache[url] = current
        while len(self.cache) > self.cache_size:
            self.cache.popitem(last=False)
        return current

    async def resolve(self, occ: LinkOccurrence) -> LinkOccurrence:
        """The occurrence with its final URL canonicalised; unchanged when it is no short
        link or cannot be resolved (the capture follows redirects anyway)."""
        if not occ.needs_resolve:
            return occ
        final = await self.final_url(occ.canonical_url)
        canonical = canonicalize(final) if final else None
        if not isinstance(canonical, CanonicalUrl):
            return occ
        return occ.model_copy(
            update={
                "canonical_url": canonical.canonical,
                "domain": canonical.domain,
                "needs_resolve": False,
                "final_url": final,
            }
        )

    async def resolve_all(self, occurrences: list[LinkOccurrence]) -> list[LinkOccurrence]:
        """Resolve every short link of a post, concurrently (bounded)."""
        if not any(o.needs_resolve for o in occurrences):
            return occurrences
        return list(await asyncio.gather(*(self.resolve(o) for o in occurrences)))
