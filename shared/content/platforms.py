"""What social platforms put in their titles: the author's name is in og:title
("Name on X: ...", "Name (@handle) on X", "Forbes (@forbes.com)", a Telegram channel's name)
and Reddit wraps the post title in "From the r community on Reddit: ..."."""

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


def clean_title(title: str | None) -> str | None:
    """A title without a platform's wrapper text."""
    return REDDIT_WRAPPER.sub("", title) if title else title
