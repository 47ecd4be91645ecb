"""YouTube: its hosts, canonical form (`https://www.youtube.com/watch?v=<id>`, keeping the
start time as `t`), its video URLs and its consent gate."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from shared.platforms.site import InfoFields, MediaRule, Site, SiteResult, redirect, web

if TYPE_CHECKING:
    from shared.links.urlparts import UrlParts

HOST = "www.youtube.com"
WEB_HOSTS = frozenset(
    {"youtube.com", HOST, "m.youtube.com", "youtube-nocookie.com", "www.youtube-nocookie.com"}
)
SHORT_HOSTS = ("youtu.be", "www.youtu.be")
VIDEO_ID = r"[A-Za-z0-9_-]{11}"
_ID = re.compile(VIDEO_ID)
_PATH_ID = re.compile(rf"/(?:shorts|embed|live|v|e)/({VIDEO_ID})/?")
_SHORT = re.compile(rf"/({VIDEO_ID})/?")
_FRAGMENT_T = re.compile(r"(?:^|&)t=([^&]+)")
_TIME = re.compile(r"\d{1,6}(?:\.\d{1,3})?s?|(?=\d)(?:\d{1,3}h)?(?:\d{1,4}m)?(?:\d{1,6}s)?")
"""A start time YouTube reads: seconds (`90`, `90s`, `90.5`) or `1h2m3s` and its parts."""


def _start(p: UrlParts) -> str | None:
    """The start time the link asks for (`t`, `start`, `time_continue`, or `#t=`); a value
    that is no time is dropped, as YouTube ignores it (the link is the same video)."""
    values = [p.get(name) for name in ("t", "start", "time_continue")]
    if p.fragment:
        m = _FRAGMENT_T.search(p.fragment)
        values.append(m.group(1) if m else None)
    return next((v for v in values if v and _TIME.fullmatch(v)), None)


def canonical(p: UrlParts) -> SiteResult | None:
    """`youtu.be/<id>`, `/shorts/<id>`, `/embed/<id>`, `/live/<id>`, `/v/<id>`, `m.` and the
    nocookie hosts -> the watch URL; other watch parameters dropped."""
    video: str | None = None
    if p.host in SHORT_HOSTS:
        m = _SHORT.fullmatch(p.path)
        video = m.group(1) if m else None
    elif p.host in WEB_HOSTS:
        if p.path == "/redirect":
            return redirect(p, p.get("q"))
        if p.path in ("/watch", "/watch/"):
            v = p.get("v")
            video = v if v and _ID.fullmatch(v) else None
        else:
            m = _PATH_ID.fullmatch(p.path)
            video = m.group(1) if m else None
        if video is None:
            return web(p, HOST)
    else:
        return None
    if video is None:
        return None
    start = _start(p)
    query: tuple[tuple[str, str | None], ...] = (("v", video),)
    if start:
        query += (("t", start),)
    parts = dict(scheme="https", userinfo="", host=HOST, port=None, path="/watch", fragment=None)
    return SiteResult(p.replace(query=query, **parts))


def top_comments(n: int) -> dict[str, list[str]]:
    """yt-dlp's YouTube arguments asking for its top `n` comments and no replies to them."""
    return {"max_comments": [str(n), str(n), "0", "0"], "comment_sort": ["top"]}


DOMAINS = ("youtube.com", "youtu.be", "youtube-nocookie.com")
SITE = Site(
    name="youtube",
    title="YouTube",
    links=DOMAINS,
    rules=dict.fromkeys(DOMAINS, canonical),
    deletable=("youtube.com", "youtu.be"),
    https_only=DOMAINS,
    media_key="youtube",
    ytdlp=InfoFields(
        "youtube",
        name=("channel", "uploader"),
        handle=("uploader_id",),  # the @handle
        id=("channel_id",),
        url=("channel_url", "uploader_url"),
        handle_prefix="@",
        comment_args=top_comments,
        comment_link="lc",
    ),
    media_rules=(
        MediaRule(("youtube.com", "youtube-nocookie.com"), re.compile(r"/watch"), "v", _ID),
        MediaRule(("youtu.be",), re.compile(rf"^/({VIDEO_ID})(?:/|$)")),
        MediaRule(
            ("youtube.com", "youtube-nocookie.com"),
            re.compile(rf"^/(?:shorts|embed|live|v|e)/({VIDEO_ID})(?:/|$)"),
        ),
    ),
    walls={
        "youtube.com": re.compile(
            r"sign in to confirm you.re not a bot|before you continue to youtube", re.I
        )
    },
    consent_hosts=("consent.youtube.com",),
)
