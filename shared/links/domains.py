"""Registrable domains (public suffix list, offline) and the https-only host table."""

from __future__ import annotations

from functools import lru_cache

import tldextract

from shared.platforms import registry

HTTPS_ONLY_DOMAINS = frozenset(
    {
        # every platform's (shared.platforms.registry: its own, short and CDN domains)
        *registry.HTTPS_ONLY,
        # large sites that only serve https (HSTS preloaded)
        "archive.org",
        "wikipedia.org",
        "github.com",
        "medium.com",
        "substack.com",
        "vimeo.com",
        "twitch.tv",
        "tumblr.com",
        "linkedin.com",
        "spotify.com",
        "soundcloud.com",
        "google.com",
        "threads.net",
    }
)
"""Registrable domains whose ``http://`` links are upgraded to ``https://`` in the
canonical form. Other hosts keep the scheme they were linked with."""


@lru_cache(maxsize=1)
def _extractor() -> tldextract.TLDExtract:
    # suffix_list_urls=() -> only the snapshot bundled with tldextract, never the network;
    # cache_dir=None -> nothing written to disk.
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


@lru_cache(maxsize=65536)
def registrable_domain(host: str) -> str:
    """The registrable domain ("eTLD+1") of a host: ``news.bbc.co.uk`` -> ``bbc.co.uk``.

    IP literals, single-label hosts and hosts that *are* a public suffix are returned as
    given (lower-cased, without a trailing dot). Never raises.
    """
    h = host.strip().lower().rstrip(".") if isinstance(host, str) else ""
    if not h or h.startswith("[") or h.replace(".", "").isdigit():
        return h
    try:
        r = _extractor()(h)
    except Exception:  # tldextract on odd input: fall back to the host itself
        return h
    if r.domain and r.suffix:
        return f"{r.domain}.{r.suffix}"
    return h


@lru_cache(maxsize=4096)
def public_suffix(host: str) -> str:
    """The public suffix of a host (``co.uk`` for ``news.bbc.co.uk``), from the bundled
    list; "" when the list does not know its top-level domain (``site.example``), for IP
    literals, and on odd input. Never raises."""
    h = host.strip().lower().rstrip(".") if isinstance(host, str) else ""
    if not h or h.startswith("[") or h.replace(".", "").isdigit():
        return ""
    try:
        return str(_extractor()(h).suffix)
    except Exception:  # tldextract on odd input
        return ""


def host_matches(host: str, entries: frozenset[str]) -> str | None:
    """The entry of ``entries`` that ``host`` equals or is a subdomain of, else ``None``.

    Only the registrable domain and names below it are tried, so an entry such as
    ``co.uk`` (a public suffix) never matches everything under it.
    """
    reg = registrable_domain(host)
    candidate = host
    while True:
        if candidate in entries:
            return candidate
        if len(candidate) <= len(reg):
            return None
        dot = candidate.find(".")
        if dot < 0:
            return None
        candidate = candidate[dot + 1 :]
