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

AUTHOR_IN_TITLE: dict[str, re.Pattern[str]] = {
    "x.com": re.compile(r"^(?P<name>.+?)(?: \(@[^)]+\))?(?: on X\b| / X$)"),
    "twitter.com": re.compile(
        r"^(?P<name>.+?)(?: \(@[^)]+\))?(?: on (?:X|Twitter)\b| / (?:X|Twitter)$)"
    ),
    "instagram.com": re.compile(r"^(?P<name>.+?)(?: \(@[^)]+\))?(?: on Instagram\b| • Instagram)"),
    "tiktok.com": re.compile(r"^(?P<name>.+?)(?: \(@[^)]+\))? on TikTok\b"),
    "threads.net": re.compile(r"^(?P<name>.+?)(?: \(@[^)]+\))? on Threads\b"),
    "bsky.app": re.compile(r"^(?P<name>.+?) \(@[^)]+\)$"),
    "t.me": re.compile(r"^(?P<name>.+)$"),
}
REDDIT_WRAPPER = re.compile(r"^From the \S+ community on Reddit: ", re.I)
POST_TITLE: dict[str, tuple[re.Pattern[str], re.Pattern[str], str]] = {
    # platform: (the post's title, its URL path giving the handle, the platform's name)
    "x.com": (
        re.compile(r"^(?P<name>.+?)(?: \(@\w{1,15}\))? on (?:X|Twitter)(?:: .*)?$", re.S),
        re.compile(r"^/(?P<handle>\w{1,15})/status(?:es)?/\d+"),
        "X",
    ),
    "tiktok.com": (
        re.compile(r"^(?P<name>.+?)(?: \(@[\w.]+\))? on TikTok(?:: .*)?$", re.S),
        re.compile(r"^/@(?P<handle>[\w.]{1,32})/(?:video|photo)/\d+"),
        "TikTok",
    ),
}
POST_TITLE["twitter.com"] = POST_TITLE["x.com"]
X_PROFILE = re.compile(r"^(?P<name>.+?) \((?P<handle>@\w{1,15})\) / (?:X|Twitter)$")


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
    if domain in POST_TITLE:
        title_form, path_form, label = POST_TITLE[domain]
        named, path = title_form.match(title), path_form.match(urlsplit(url).path)
        if named and path and named.group("name").strip():
            return f"{named.group('name').strip()} (@{path.group('handle')}) on {label}"
        profile = X_PROFILE.match(title) if label == "X" else None
        if profile:
            return f"{profile.group('name')} ({profile.group('handle')}) on X"
    return REDDIT_WRAPPER.sub("", title)
