"""Bluesky: its host (`bsky.app`), post URLs and titles."""

from __future__ import annotations

import re

from shared.platforms.site import InfoFields, MediaRule, Site

POST_HOST = "bsky.app"
POST_PATH = re.compile(r"^/profile/(?P<actor>[^/]+)/post/(?P<rkey>[A-Za-z0-9._:~-]{1,100})/?$")

SITE = Site(
    name="bluesky",
    title="Bluesky",
    links=(POST_HOST,),
    deletable=(POST_HOST,),
    https_only=(POST_HOST,),
    media_key="bluesky",
    ytdlp=InfoFields("bluesky", titled=False),
    media_rules=(MediaRule((POST_HOST,), re.compile(r"^/profile/[^/]+/post/([\w]+)")),),
    post_may_hold_video=lambda url: True,
    author_in_title={POST_HOST: re.compile(r"^(?P<name>.+?) \(@[^)]+\)$")},
)
