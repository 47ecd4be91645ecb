"""Every platform the product knows, and the one way the rest of the tree learns about them:
the link rules (canonical forms, short links, https-only domains, the default deletable
allowlist), video keys, walls, titles, yt-dlp's field names and which plugin runs for a link
read these tables, so
no module outside `shared/platforms` spells a platform's host (tests/platforms/
test_registry.py checks it).

Each platform's facts are one module, `shared/platforms/facts/<platform>_site.py`; its chain (the
API steps, which import the fetching code and yt-dlp) is `shared/platforms/<platform>.py`,
and `shared/platforms/chains.py` pairs the two. This module imports the facts alone, so the
link rules, low in the tree and used by the poller, the writer and the web, stay light.
"""

from __future__ import annotations

from shared.platforms.facts import (
    bluesky_site as bluesky,
)
from shared.platforms.facts import (
    facebook_site as facebook,
)
from shared.platforms.facts import (
    imgur_site as imgur,
)
from shared.platforms.facts import (
    instagram_site as instagram,
)
from shared.platforms.facts import (
    mastodon_site as mastodon,
)
from shared.platforms.facts import (
    reddit_site as reddit,
)
from shared.platforms.facts import (
    streamable_site as streamable,
)
from shared.platforms.facts import (
    telegram_site as telegram,
)
from shared.platforms.facts import (
    tiktok_site as tiktok,
)
from shared.platforms.facts import (
    x_site as x,
)
from shared.platforms.facts import (
    youtube_site as youtube,
)
from shared.platforms.site import InfoFields, MediaRule, PostTitle, Site, SiteRule

SITES: dict[str, Site] = {
    m.SITE.name: m.SITE
    for m in (
        x,
        bluesky,
        tiktok,
        instagram,
        youtube,
        reddit,
        facebook,
        imgur,
        streamable,
        telegram,
        mastodon,
    )
}
"""Every platform by name (its plugin's), in the order its links are tried."""


SITE_RULES: dict[str, SiteRule] = {d: r for s in SITES.values() for d, r in s.rules.items()}
"""Each platform domain's canonical-form rule (`shared.links.sites`)."""
SHORTENERS: tuple[str, ...] = tuple(d for s in SITES.values() for d in s.shorteners)
"""The platforms' own short-link domains (resolved before anything is decided)."""
HTTPS_ONLY: tuple[str, ...] = tuple(d for s in SITES.values() for d in s.https_only)
"""The platforms' domains whose `http://` links are upgraded (`shared.links.domains`)."""
DELETABLE: tuple[str, ...] = tuple(d for s in SITES.values() for d in s.deletable)
"""The deletable-content domains: the default `DELETABLE_ALLOWLIST`."""
MEDIA_RULES: tuple[tuple[str, MediaRule], ...] = tuple(
    (s.media_key, rule) for s in SITES.values() if s.media_key for rule in s.media_rules
)
"""(media key platform, rule): the URL forms naming a platform's video (`links.video_key`)."""
WALLS = {d: w for s in SITES.values() for d, w in s.walls.items()}
"""The words of a platform's logged-out shell, by domain (`shared.content.walls`)."""
CONSENT_HOSTS: tuple[str, ...] = tuple(h for s in SITES.values() for h in s.consent_hosts)
"""Hosts that are a platform's consent gate."""
AUTHOR_IN_TITLE = {d: p for s in SITES.values() for d, p in s.author_in_title.items()}
"""The og:title form naming the author, by domain (`shared.content.platforms`)."""
POST_TITLES: dict[str, tuple[PostTitle, str]] = {
    d: (t, s.title) for s in SITES.values() for d, t in s.post_titles.items()
}
"""A post page's title form and its platform's name, by domain."""
TITLE_WRAPPERS = tuple(s.title_wrapper for s in SITES.values() if s.title_wrapper)
"""Text platforms wrap every page title in."""
INFO_FIELDS: tuple[InfoFields, ...] = tuple(s.ytdlp for s in SITES.values() if s.ytdlp)
"""What each platform's yt-dlp extractor calls a post's parts (`shared.platforms.ytdlp`)."""


def by_media_key(platform: str) -> Site | None:
    """The platform whose videos have this media key platform (`twitter` -> X)."""
    return next((s for s in SITES.values() if s.media_key == platform), None)


def link_domains(name: str, instances: str = "") -> tuple[str, ...]:
    """The domains of a platform's links (those its plugin runs for): its own, or for a
    platform on any host the instances its setting lists (`instances`, comma-separated)."""
    site = SITES[name]
    if site.instances is None:
        return site.links
    return tuple(h.strip().lower() for h in instances.split(",") if h.strip())
