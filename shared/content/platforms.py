"""What social platforms put in their titles: the author's name is in og:title
("Name on X: ...", "Name (@handle) on X", "Forbes (@forbes.com)", a Telegram channel's name)
and Reddit wraps the post title in "From the r community on Reddit: ...".

Titles of posts on X and TikTok are given one form, "Name (@handle) on X" / "Name (@handle)
on TikTok": the form X itself serves as og:title to link unfurlers, so a post gets the same
title whether the raw fetch got that page or the browser got the one titled
'Name on X: "<the whole post>" / X'. The post's text stays in the description and the
readable text; the handle (from the post's URL) tells apart people with the same name."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from shared.platforms import registry

AUTHOR_IN_TITLE: dict[str, re.Pattern[str]] = {
    **registry.AUTHOR_IN_TITLE,
    "threads.net": re.compile(r"^(?P<name>.+?)(?: \(@[^)]+\))? on Threads\b"),
}
"""The og:title form naming the author, by domain: the platforms' (shared.platforms.registry)
and Threads' (no platform of ours, but its titles name the author the same way)."""


def _platform(url: str) -> str | None:
    host = (urlsplit(url).hostname or "").lower()
    for domain in AUTHOR_IN_TITLE:
        if host == domain or host.endswith("." + domain):
            return domain
    return None


def author_from_title(url: str, og_title: str | None) -> str | None:
    """The post's or profile's author named in a platform's og:title, or None."""
    domain = _platform(url)
    if not og_title or domain is None:
        return None
    match = AUTHOR_IN_TITLE[domain].match(og_title)
    return match.group("name").strip() or None if match else None


def clean_title(url: str, title: str | None) -> str | None:
    """A title without a platform's wrapper text; posts on X and TikTok and X profiles in
    the "Name (@handle) on X" form (see the module docstring)."""
    if not title:
        return title
    domain = _platform(url)
    if domain in registry.POST_TITLES:
        form, label = registry.POST_TITLES[domain]
        named, path = form.title.match(title), form.path.match(urlsplit(url).path)
        if named and path and named.group("name").strip():
            return f"{named.group('name').strip()} (@{path.group('handle')}) on {label}"
        profile = form.profile.match(title) if form.profile else None
        if profile:
            return f"{profile.group('name')} ({profile.group('handle')}) on {label}"
    for wrapper in registry.TITLE_WRAPPERS:
        title = wrapper.sub("", title)
    return title
