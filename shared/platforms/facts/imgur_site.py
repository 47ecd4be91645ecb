"""Imgur: its host (`imgur.com`) and post URLs."""

from __future__ import annotations

from shared.platforms.site import InfoFields, Site

DOMAIN = "imgur.com"
POST_HOSTS = (DOMAIN, "www.imgur.com", "i.imgur.com", "m.imgur.com")

SITE = Site(
    name="imgur",
    title="Imgur",
    links=(DOMAIN,),
    https_only=(DOMAIN,),
    ytdlp=InfoFields("imgur"),
)
