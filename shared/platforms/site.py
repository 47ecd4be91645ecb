"""What the product knows about a platform apart from its chain: the shape of the facts each
`shared/platforms/facts/<platform>_site.py` declares (`Site`, with what its yt-dlp extractor
calls a post's parts, `InfoFields`), and the small rewrites its canonical
form is made with (`SiteResult`, `web`, `resolve`, `redirect`, `with_slash`).

Light on purpose: standard library only at import (`shared.links.urlparts`, which imports the
link rules and so this module, is named for the type checker and read by `redirect` when it
runs), so the link rules, which sit low in the tree, can read the facts without importing the
chains (`shared.platforms.registry` says why).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import unquote

if TYPE_CHECKING:
    from shared.links.urlparts import UrlParts


@dataclass(frozen=True, slots=True)
class SiteResult:
    """What a site rule decided."""

    parts: UrlParts
    needs_resolve: bool = False
    redirect: str | None = None


SiteRule = Callable[["UrlParts"], SiteResult | None]
"""A normalised URL to its canonical form: None when the rule does not apply; idempotent."""


def web(p: UrlParts, host: str, path: str | None = None) -> SiteResult:
    """The same page on the site's one web host, over https, without a fragment."""
    return SiteResult(
        p.replace(scheme="https", host=host, port=None, fragment=None, path=path or p.path)
    )


def resolve(p: UrlParts) -> SiteResult:
    """A short link: resolved by the poller before anything is decided about it."""
    return SiteResult(p.replace(scheme="https", port=None, fragment=None), needs_resolve=True)


def redirect(p: UrlParts, target: str | None) -> SiteResult | None:
    """A redirect link (`?url=`, `?q=`): canonicalise its target instead."""
    # at call time: shared.links imports the registry, which imports this module
    from shared.links.urlparts import SCHEME_PREFIXES

    if target is None:
        return None
    target = unquote(target)
    if not target.lower().startswith(SCHEME_PREFIXES):
        return None
    return SiteResult(p, redirect=target)


def with_slash(path: str) -> str:
    """A path with a trailing slash, unless its last segment names a file."""
    last = path.rsplit("/", 1)[-1]
    return path if path.endswith("/") or "." in last else path + "/"


@dataclass(frozen=True)
class MediaRule:
    """A URL form naming a video: on one of `domains` (or below), the path matches `path`
    and the id is its group `id` (else its first group), or, with `query`, that query
    parameter when it matches `value`."""

    domains: tuple[str, ...]
    path: re.Pattern[str]
    query: str | None = None
    value: re.Pattern[str] | None = None


@dataclass(frozen=True)
class PostTitle:
    """A post page's title form, which the metadata gives one shape ("Name (@handle) on X"):
    the title naming the author, the URL path naming the handle, and a profile page's title
    (None: the platform's profiles keep their title)."""

    title: re.Pattern[str]
    path: re.Pattern[str]
    profile: re.Pattern[str] | None = None


@dataclass(frozen=True)
class InfoFields:
    """What a platform's yt-dlp extractor calls a post's parts in its info dictionary
    (`shared.platforms.ytdlp` maps the parts every extractor shares): the keys of each part of
    the author, each tried in order. The defaults are what the other extractors use."""

    extractor: str
    """The start of its extractors' keys, lower case (`tiktok`: TikTok, TikTokVM, TikTokUser)."""
    name: tuple[str, ...] = ("uploader", "channel")
    handle: tuple[str, ...] = ()
    id: tuple[str, ...] = ("uploader_id", "channel_id")
    url: tuple[str, ...] = ("uploader_url", "channel_url")
    handle_prefix: str = ""
    """Characters its handles start with that are no part of the handle (YouTube's `@`)."""
    profile: str | None = None
    """Its profile URLs, `{}` the first `handle` key's value, when no `url` key gives one."""
    titled: bool = True
    """Whether its `title` is the post's own; False: made up (from the text, the author),
    the post then has none, and the title is its text when there is no description."""
    comment_args: Callable[[int], dict[str, list[str]]] | None = None
    """Its extractor's arguments asking for its top `n` comments; None: it gives none."""
    comment_link: str | None = None
    """The query parameter that names one of its comments in the post's URL (YouTube's
    `lc`); None: its comments are not kept."""


@dataclass(frozen=True)
class Site:
    """One platform's facts. Host entries are registrable domains unless said otherwise."""

    name: str
    """Its plugin's name (`x`), the platform of its posts."""
    title: str
    """Its name as readers know it (`X`)."""
    links: tuple[str, ...] = ()
    """The registrable domains of its links in canonical form: its plugin runs for these."""
    instances: str | None = None
    """For a platform on any host (Mastodon): the setting of its plugin listing the hosts
    whose links are its (`links` is then empty)."""
    origin: str = ""
    """The scheme and host of its canonical URLs, when one host is (`https://old.reddit.com`)."""
    rules: Mapping[str, SiteRule] = field(default_factory=dict)
    """Its canonical form: the site rule of each of its registrable domains."""
    deletable: tuple[str, ...] = ()
    """Its domains in the default `DELETABLE_ALLOWLIST` (a deletable-content site)."""
    https_only: tuple[str, ...] = ()
    """Its domains whose `http://` links are upgraded to `https://`."""
    shorteners: tuple[str, ...] = ()
    """Its short-link domains whose links are resolved before anything else (X's `t.co`)."""
    media_key: str | None = None
    """yt-dlp's extractor key of its videos (lower case), the platform of its media keys."""
    media_rules: tuple[MediaRule, ...] = ()
    """The URL forms naming one of its videos (`shared.links.video_key`)."""
    ytdlp: InfoFields | None = None
    """What its yt-dlp extractor calls a post's parts: every platform whose chain has a
    yt-dlp step declares it (and any whose posts yt-dlp may read, X's)."""
    post_may_hold_video: Callable[[str], bool] | None = None
    """Whether a link naming one of its videos by `media_rules` is a post that may or may
    not hold one (known once its capture read the post); None: a video link is a video."""
    walls: Mapping[str, re.Pattern[str]] = field(default_factory=dict)
    """The words of its logged-out shell, by the domain whose pages show it."""
    consent_hosts: tuple[str, ...] = ()
    """Hosts (full names) that are its consent gate."""
    author_in_title: Mapping[str, re.Pattern[str]] = field(default_factory=dict)
    """The og:title form naming a post's or profile's author (group `name`), by domain."""
    post_titles: Mapping[str, PostTitle] = field(default_factory=dict)
    """Its post pages' title forms, by domain."""
    title_wrapper: re.Pattern[str] | None = None
    """Text it wraps every page title in (Reddit's "From the r community on Reddit: ")."""
    capture_thing: str = "the post"
    """What its plugin's capture keeps, in a reader's words ("the Reddit thread")."""

    @property
    def domains(self) -> tuple[str, ...]:
        """Every registrable domain it owns."""
        found = [*self.links, *self.rules, *self.deletable, *self.https_only, *self.shorteners]
        found += [*self.walls, *self.author_in_title, *self.post_titles]
        return tuple(dict.fromkeys(found))

    @property
    def hosts(self) -> tuple[str, ...]:
        """Every host name its facts spell: its domains, the hosts of its video URLs, its
        consent gates."""
        found = [*self.domains, *(d for r in self.media_rules for d in r.domains)]
        return tuple(dict.fromkeys([*found, *self.consent_hosts]))
