"""Streamable: its host (`streamable.com`) and video URLs."""

from __future__ import annotations

import re

from shared.platforms.site import InfoFields, MediaRule, Site

DOMAIN = "streamable.com"

SITE = Site(
    name="streamable",
    title="Streamable",
    links=(DOMAIN,),
    media_key="streamable",
    ytdlp=InfoFields("streamable"),
    media_rules=(MediaRule((DOMAIN,), re.compile(r"^/(?:[eso]/)?([\w]+)/?$")),),
)
