"""yt-dlp's extraction as a platform step: `YoutubeDL(...).extract_info(url,
download=False)` in-process (in a worker thread whose connections pass the target policy,
shared.fetching.socket_guard), the info dictionary mapped to a post.

Nothing is downloaded here: a video is the media service's (the link's media job), an
image the hook's (shared.platforms.media). The site's cookies (shared.cookies), when the
operator gave some, go to yt-dlp in a file of their own.

`post_from_info` maps the fields every extractor shares; what differs, each platform's facts
say (`Site.ytdlp`, an `InfoFields`, read through `shared.platforms.registry.INFO_FIELDS`): what
its extractor calls the author's name, handle, id and profile URL (TikTok's `uploader` is the
handle, YouTube's `uploader_id` the @handle, Instagram's `channel` the user name), whether its
title is its own, how its top comments are asked for and linked to (YouTube's). The extractor
that answered picks the platform's names (its `extractor_key`); any other extractor's go by
`InfoFields`' defaults.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from shared.cookies import CookieSet
from shared.fetching import socket_guard
from shared.platforms.outcome import StepOutcome, gone, present, unknown
from shared.platforms.post import Author, Counts, Post, PostMedia, count, iso_utc
from shared.platforms.registry import INFO_FIELDS
from shared.platforms.site import InfoFields
from shared.platforms.ytdlp_errors import classify

VIDEO_EXTS = frozenset({"mp4", "webm", "mkv", "mov", "m4v", "flv", "m3u8", "mpd", "ts"})
IMAGE_EXTS = frozenset({"jpg", "jpeg", "png", "webp", "gif", "heic", "avif"})
GONE_WHATS = {"REMOVED": "removed", "PRIVATE": "private"}
"""yt-dlp failures that are the platform's own word that the post is gone."""


@dataclass(frozen=True)
class YtdlpOptions:
    """How the extraction runs."""

    user_agent: str
    socket_timeout: float = 20.0
    allow_private: bool = False
    cookies: CookieSet | None = None
    comments: int = 0
    """Top comments to ask for (YouTube), 0 = none."""
    max_items: int = 20
    """Entries of a playlist-shaped post (a carousel) read at most."""
    retries: int = 0
    """Retries of a request and of an extraction (the media download's MEDIA_RETRIES; a
    platform step tries once: the chain has other steps)."""


class StderrLogger:
    """yt-dlp's messages go to stderr (the hook's log), never stdout (its records)."""

    def debug(self, msg: str) -> None:
        if not msg.startswith("[debug] "):
            print(msg, file=sys.stderr)

    def info(self, msg: str) -> None:
        print(msg, file=sys.stderr)

    def warning(self, msg: str) -> None:
        print(msg, file=sys.stderr)

    def error(self, msg: str) -> None:
        print(msg, file=sys.stderr)


def params(opts: YtdlpOptions, cookiefile: str | None) -> dict[str, Any]:
    """YoutubeDL's parameters every use shares (the platform steps' extraction, the media
    hook's download): quiet, messages to stderr, no cache, the User-Agent, timeouts and
    retries, and the site's cookies (`cookiefile`, see `cookie_file`)."""
    p: dict[str, Any] = {
        "quiet": True,
        "no_warnings": False,
        "noprogress": True,
        "logger": StderrLogger(),
        "socket_timeout": opts.socket_timeout,
        "retries": opts.retries,
        "extractor_retries": opts.retries,
        "cachedir": False,
        "playlistend": opts.max_items,
        "http_headers": {"User-Agent": opts.user_agent},
        "color": {"stderr": "no_color", "stdout": "no_color"},
    }
    if cookiefile:
        p["cookiefile"] = cookiefile
    return p


def extraction_params(opts: YtdlpOptions, cookiefile: str | None) -> dict[str, Any]:
    """YoutubeDL's parameters for an extraction without download."""
    p = params(opts, cookiefile) | {
        "skip_download": True,
        "ignore_no_formats_error": True,
        "check_formats": False,
    }
    if opts.comments > 0:
        p["getcomments"] = True
        p["extractor_args"] = {
            f.extractor: f.comment_args(opts.comments) for f in INFO_FIELDS if f.comment_args
        }
    return p


@contextlib.contextmanager
def cookie_file(cookies: CookieSet | None) -> Iterator[str | None]:
    """The path of the site's cookies in a private file of their own (deleted on exit), or
    None without cookies: what `params` takes."""
    if not cookies:
        yield None
        return
    with cookies.netscape_file() as path:
        yield str(path)


def _extract(url: str, opts: YtdlpOptions) -> dict[str, Any]:
    # imported here, not at the top: the writer and the web import this module's chain
    # (shared.platforms.chains: `recognise`) and never extract; yt-dlp costs each process
    # that imports it 4-6 MB PSS (docs/operations.md, "Things to know")
    from yt_dlp import YoutubeDL

    with (
        socket_guard.guarded(not opts.allow_private),
        cookie_file(opts.cookies) as path,
        YoutubeDL(extraction_params(opts, path)) as ydl,
    ):
        return dict(ydl.sanitize_info(ydl.extract_info(url, download=False)))


async def extract(url: str, opts: YtdlpOptions) -> dict[str, Any] | StepOutcome:
    """The info dictionary of `url`, or the outcome saying why there is none."""
    try:
        return await asyncio.to_thread(_extract, url, opts)
    except Exception as exc:  # DownloadError and whatever yt-dlp wraps
        return failure_outcome(url, exc, logged_in=bool(opts.cookies))


def failure_outcome(url: str, exc: BaseException, *, logged_in: bool) -> StepOutcome:
    """A yt-dlp failure as a step outcome: the platform's removed/private answers are
    `gone`, everything else (login required, rate limits, network, no video) `unknown`;
    a login asked for although cookies were given is `logged_out`."""
    refused = socket_guard.refused_error(exc)
    if refused is not None:
        return unknown("yt-dlp", url, None, "refused", str(refused))
    failure = classify(exc)
    status = 404 if "HTTP Error 404" in failure.message else None
    if failure.what in GONE_WHATS:
        reason = "not_found" if status == 404 else GONE_WHATS[failure.what]
        return gone("yt-dlp", url, status, reason, failure.message)
    if failure.what == "LOGIN_REQUIRED":
        reason = "logged_out" if logged_in else "login_required"
        return unknown("yt-dlp", url, None, reason, failure.message)
    reasons = {"RATE_LIMITED": "rate_limited", "NO_VIDEO": "no_post", "HTTP_4XX": "http_4xx"}
    reason = reasons.get(failure.what, failure.what.lower())
    return unknown("yt-dlp", url, status, reason, failure.message, failure.wait_s)


async def step(url: str, opts: YtdlpOptions, platform: str) -> StepOutcome:
    """The whole step: extraction, then the post."""
    info = await extract(url, opts)
    if isinstance(info, StepOutcome):
        return info
    if not info.get("id"):
        return unknown("yt-dlp", url, None, "bad_answer", "yt-dlp gave no id")
    return present("yt-dlp", url, 200, post_from_info(info, platform, url))


def _str(value: Any) -> str | None:
    return str(value).strip() or None if value not in (None, "") else None


def _rank(value: Any) -> float:
    """A thumbnail's `preference` (yt-dlp ranks with negative numbers too); 0 when absent."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def fields_of(info: dict[str, Any]) -> InfoFields:
    """What the extractor that answered calls a post's parts: its platform's names, or the
    defaults."""
    key = str(info.get("extractor_key") or info.get("extractor") or "").lower()
    return next((f for f in INFO_FIELDS if key.startswith(f.extractor)), InfoFields(key))


def _first(info: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    return next((v for k in keys if (v := _str(info.get(k)))), None)


def author_of(info: dict[str, Any], fields: InfoFields) -> Author:
    """The account, by what the extractor (`fields`) calls its parts."""
    handle = _first(info, fields.handle)
    url = _first(info, fields.url)
    if url is None and fields.profile and fields.handle and info.get(fields.handle[0]):
        url = fields.profile.format(info[fields.handle[0]])
    return Author(
        name=_first(info, fields.name),
        handle=handle.lstrip(fields.handle_prefix) if handle else None,
        id=_first(info, fields.id),
        url=url,
    )


def _best_thumbnail(info: dict[str, Any]) -> str | None:
    thumbs = [t for t in info.get("thumbnails") or [] if isinstance(t, dict) and t.get("url")]
    if thumbs:
        best = max(thumbs, key=lambda t: (count(t.get("width")) or 0, _rank(t.get("preference"))))
        return str(best["url"])
    return _str(info.get("thumbnail"))


def media_of(info: dict[str, Any], page_url: str) -> list[PostMedia]:
    """The post's media: its entries' (a carousel) or its own. A video is named by its page
    (the media service downloads it from there) with its poster; an image by its file."""
    entries = [e for e in info.get("entries") or [] if isinstance(e, dict)]
    if entries:
        return [m for e in entries for m in media_of(e, page_url)]
    ext = str(info.get("ext") or "").lower()
    formats = [f for f in info.get("formats") or [] if isinstance(f, dict)]
    has_video = any(str(f.get("vcodec") or "") not in ("", "none") for f in formats) or (
        ext in VIDEO_EXTS
    )
    audio_only = (
        bool(formats)
        and not has_video
        and all(str(f.get("vcodec") or "none") == "none" for f in formats)
    )
    poster = _best_thumbnail(info)
    if has_video:
        return [
            PostMedia(
                kind="video",
                url=str(info.get("webpage_url") or page_url),
                poster=poster,
                width=count(info.get("width")),
                height=count(info.get("height")),
                duration_s=float(info["duration"]) if count(info.get("duration")) else None,
            )
        ]
    if ext in IMAGE_EXTS and info.get("url"):
        return [
            PostMedia(
                kind="image",
                url=str(info["url"]),
                width=count(info.get("width")),
                height=count(info.get("height")),
            )
        ]
    media = []
    if audio_only:
        media.append(PostMedia(kind="audio", url=str(info.get("webpage_url") or page_url)))
    if poster:
        media.append(PostMedia(kind="image", url=poster))
    return media


def _replies(info: dict[str, Any], platform: str, url: str, link: str | None) -> list[Post]:
    """Its top-level comments, each linked to by the query parameter `link` (none without)."""
    if link is None:
        return []
    out = []
    for c in info.get("comments") or []:
        if not isinstance(c, dict) or not c.get("id") or c.get("parent") not in (None, "root"):
            continue
        out.append(
            Post(
                platform=platform,
                post_id=str(c["id"]),
                url=f"{url}{'&' if '?' in url else '?'}{link}={c['id']}",
                author=Author(name=_str(c.get("author")), id=_str(c.get("author_id"))),
                text=str(c.get("text") or ""),
                created_at=iso_utc(c.get("timestamp")),
                counts=Counts(likes=count(c.get("like_count"))),
                source="yt-dlp",
            )
        )
    return out


def post_from_info(info: dict[str, Any], platform: str, url: str) -> Post:
    """The post an info dictionary describes."""
    fields = fields_of(info)
    page = str(info.get("webpage_url") or url)
    when = info.get("timestamp") or info.get("release_timestamp")
    created = iso_utc(when) if when else None
    if created is None and isinstance(info.get("upload_date"), str):
        d = info["upload_date"]
        created = iso_utc(f"{d[:4]}-{d[4:6]}-{d[6:8]}T00:00:00Z") if len(d) == 8 else None
    titled = fields.titled
    description = str(info.get("description") or "")
    title = _str(info.get("title")) if titled else None
    return Post(
        platform=platform,
        post_id=str(info.get("id")),
        url=page,
        author=author_of(info, fields),
        title=title,
        text=description or ("" if titled else str(info.get("title") or "")),
        created_at=created,
        language=_str(info.get("language")),
        media=media_of(info, page),
        counts=Counts(
            likes=count(info.get("like_count")),
            reposts=count(info.get("repost_count")),
            replies=count(info.get("comment_count")),
            views=count(info.get("view_count")),
        ),
        replies=_replies(info, platform, page, fields.comment_link),
        source="yt-dlp",
    )
