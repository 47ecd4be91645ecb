"""Mastodon: a status on any instance. Its instances are arbitrary hosts, so a link is
Mastodon's when its host is one of the instances its plugin's `MASTODON_INSTANCES` lists
(a few big ones by default) and its path is a status URL's: `/@<user>/<id>` (a remote
account's `/@<user>@<domain>/<id>` as the instance shows it too) or
`/users/<user>/statuses/<id>`. The id is the instance's own, which its public API answers
(`/api/v1/statuses/<id>`)."""

from __future__ import annotations

import re

from shared.platforms.site import Site

STATUS_PATHS = (
    re.compile(r"^/@(?P<handle>\w{1,64}(?:@[\w.-]{1,253})?)/(?P<id>\d{1,25})/?$"),
    re.compile(r"^/users/(?P<handle>\w{1,64})/statuses/(?P<id>\d{1,25})/?$"),
)
INSTANCES_SETTING = "MASTODON_INSTANCES"

SITE = Site(name="mastodon", title="Mastodon", instances=INSTANCES_SETTING)
