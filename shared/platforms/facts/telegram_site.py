"""Telegram: its hosts (`t.me`, `telegram.me`), public channel post URLs and titles."""

from __future__ import annotations

import re

from shared.platforms.site import InfoFields, Site

POST_HOSTS = ("t.me", "telegram.me", "www.t.me")

SITE = Site(
    name="telegram",
    title="Telegram",
    links=("t.me", "telegram.me"),
    ytdlp=InfoFields("telegram", titled=False),  # TelegramEmbed's title is the channel's
    author_in_title={"t.me": re.compile(r"^(?P<name>.+)$")},
)
