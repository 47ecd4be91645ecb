"""X (Twitter): the syndication endpoint (`tweet-result`, what embedded posts read), then
the fxtwitter API; the browser's page is the hook's last step (shared.platforms.page).

Syndication answers a post as JSON (`__typename: Tweet`), a tombstone (`TweetTombstone`,
X's own words: "This Post was deleted by the Post author"), `TweetUnavailable` with a
reason (Protected, Suspended ...), or 404. Its text of a long post (`note_tweet`) stops at
280 characters: the full text is then asked of fxtwitter. fxtwitter answers `{code,
message, tweet}`: 404 NOT_FOUND, 401 PRIVATE_TWEET, 500 API_FAILURE.

Parents: the syndication answer holds the post replied to (`parent`) but not that post's
own parent; up to `Settings.reply_depth` more ancestors are asked of syndication one by one.
"""

from __future__ import annotations

import math
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from shared.platforms.chain import Chain, Context, PostRef
from shared.platforms.facts import x_site as facts
from shared.platforms.http import get_json, judge, parse_json
from shared.platforms.outcome import StepOutcome, gone, present, unknown
from shared.platforms.post import Author, Counts, Post, PostMedia, count, iso_utc

PLATFORM = "x"
BASES: tuple[str, ...] = ("X_SYNDICATION_URL", "FXTWITTER_API_URL")
"""The settings naming its API base URLs."""
TOMBSTONE_REASONS = (
    (re.compile(r"deleted by the (post|tweet) author|was deleted", re.I), "deleted"),
    (re.compile(r"suspended", re.I), "suspended"),
    (re.compile(r"no longer exists|doesn.t exist|does not exist", re.I), "not_found"),
    (re.compile(r"limits who can view|protected", re.I), "protected"),
)
UNAVAILABLE_REASONS = {"Protected": "protected", "Suspended": "suspended"}


def recognise(url: str) -> PostRef | None:
    """A post on X (its hosts, `facts.POST_HOSTS`), or None."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().removeprefix("www.")
    if host not in facts.POST_HOSTS:
        return None
    m = facts.STATUS_PATH.match(parts.path or "/")
    if m is None:
        return None
    handle = m.group("handle")
    return PostRef(PLATFORM, m.group("id"), url, handle=handle)


def token(post_id: str) -> str:
    """The syndication endpoint's token: (id / 1e15 * pi) in base 36 without zeros or dot."""
    # imported here: every process that knows the platforms imports this module, only a
    # capture asks for a token (shared.platforms.ytdlp says why)
    from yt_dlp.jsinterp import js_number_to_string

    return re.sub(r"0+|\.", "", js_number_to_string((int(post_id) / 1e15) * math.pi, 36))


def full_size(url: str) -> str:
    """An image of pbs.twimg.com at its original size (`name=orig`)."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    if "name" in query or "/media/" not in parts.path:
        return url
    query["name"] = "orig"
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))


def post_url(handle: str | None, post_id: str) -> str:
    return f"https://x.com/{handle or 'i'}/status/{post_id}"


def _language(value: Any) -> str | None:
    return value if isinstance(value, str) and value not in ("", "und", "zxx", "qme") else None


def _expand(text: str, entities: dict[str, Any], media_links: set[str]) -> str:
    """t.co links replaced by where they lead; the trailing media link removed."""
    for link in entities.get("urls") or []:
        if isinstance(link, dict) and link.get("url"):
            text = text.replace(link["url"], str(link.get("expanded_url") or link["url"]))
    for short in media_links:
        text = text.replace(short, "")
    return text.strip()


def _author(name: Any, handle: Any, account: Any) -> Author:
    return Author(
        name=name, handle=handle, id=account, url=f"https://x.com/{handle}" if handle else None
    )


def _replied_to(handle: Any, post_id: str, source: str) -> Post:
    """The post replied to, known only by its id (the answer does not hold it)."""
    return Post(
        platform=PLATFORM,
        post_id=post_id,
        url=post_url(handle, post_id),
        author=Author(handle=handle),
        unavailable="not in the answer",
        source=source,
    )


def tombstone_reason(text: str) -> str:
    """What X's tombstone words mean: deleted, suspended, not_found, protected."""
    for pattern, reason in TOMBSTONE_REASONS:
        if pattern.search(text):
            return reason
    return "tombstone"


def _tombstone_text(data: dict[str, Any]) -> str:
    tomb = data.get("tombstone") or {}
    text = (tomb.get("text") or {}).get("text") if isinstance(tomb, dict) else None
    return re.sub(r"\s*Learn more\.?$", "", str(text or "This post is unavailable"))


def from_syndication(data: dict[str, Any], source: str = "syndication") -> Post:
    """A post from the syndication endpoint's JSON (a tweet, its parent or its quote)."""
    if data.get("__typename") in ("TweetTombstone", "TweetUnavailable"):
        return Post(
            platform=PLATFORM,
            post_id=str(data.get("id_str") or "0"),
            url=post_url(None, str(data.get("id_str") or "0")),
            unavailable=_tombstone_text(data),
            source=source,
        )
    user = data.get("user") or {}
    handle = user.get("screen_name")
    post_id = str(data.get("id_str"))
    media, links = [], set()
    for d in data.get("mediaDetails") or []:
        if not isinstance(d, dict):
            continue
        if d.get("url"):
            links.add(str(d["url"]))
        info = d.get("original_info") or {}
        kind = {"photo": "image", "animated_gif": "gif"}.get(str(d.get("type")), "video")
        if kind == "image":
            media.append(
                PostMedia(
                    kind="image",
                    url=full_size(str(d.get("media_url_https"))),
                    alt=d.get("ext_alt_text"),
                    width=info.get("width"),
                    height=info.get("height"),
                )
            )
        else:
            millis = (d.get("video_info") or {}).get("duration_millis")
            media.append(
                PostMedia(
                    kind=kind,
                    url=post_url(handle, post_id),
                    poster=full_size(str(d.get("media_url_https") or "")) or None,
                    width=info.get("width"),
                    height=info.get("height"),
                    duration_s=millis / 1000 if isinstance(millis, int) else None,
                )
            )
    video = data.get("video") or {}
    parent = None
    if isinstance(data.get("parent"), dict):
        parent = from_syndication(data["parent"], source)
    elif data.get("in_reply_to_status_id_str"):
        pid = str(data["in_reply_to_status_id_str"])
        parent = _replied_to(data.get("in_reply_to_screen_name"), pid, source)
    quoted = from_syndication(data["quoted_tweet"], source) if data.get("quoted_tweet") else None
    return Post(
        platform=PLATFORM,
        post_id=post_id,
        url=post_url(handle, post_id),
        author=_author(user.get("name"), handle, user.get("id_str")),
        text=_expand(str(data.get("text") or ""), data.get("entities") or {}, links),
        created_at=iso_utc(data.get("created_at")),
        language=_language(data.get("lang")),
        media=media,
        counts=Counts(
            likes=count(data.get("favorite_count")),
            reposts=count(data.get("retweet_count")),
            replies=count(data.get("conversation_count", data.get("reply_count"))),
            views=count(video.get("viewCount")) if isinstance(video, dict) else None,
        ),
        parent=parent,
        quoted=quoted,
        source=source,
    )


def from_fxtwitter(tweet: dict[str, Any], source: str = "fxtwitter") -> Post:
    """A post from fxtwitter's `tweet` object."""
    author = tweet.get("author") or {}
    handle = author.get("screen_name")
    post_id = str(tweet.get("id"))
    found = tweet.get("media") or {}
    media = [
        PostMedia(
            kind="image",
            url=full_size(str(p.get("url"))),
            alt=p.get("altText"),
            width=p.get("width"),
            height=p.get("height"),
        )
        for p in found.get("photos") or []
        if isinstance(p, dict) and p.get("url")
    ]
    for v in found.get("videos") or []:
        if isinstance(v, dict):
            duration = v.get("duration")
            media.append(
                PostMedia(
                    kind="gif" if v.get("type") == "gif" else "video",
                    url=post_url(handle, post_id),
                    poster=v.get("thumbnail_url"),
                    width=v.get("width"),
                    height=v.get("height"),
                    duration_s=float(duration) if isinstance(duration, int | float) else None,
                )
            )
    parent = None
    if tweet.get("replying_to_status"):
        parent = _replied_to(tweet.get("replying_to"), str(tweet["replying_to_status"]), source)
    quote = tweet.get("quote")
    return Post(
        platform=PLATFORM,
        post_id=post_id,
        url=post_url(handle, post_id),
        author=_author(author.get("name"), handle, author.get("id")),
        text=str(tweet.get("text") or ""),
        created_at=iso_utc(tweet.get("created_timestamp") or tweet.get("created_at")),
        language=_language(tweet.get("lang")),
        media=media,
        counts=Counts(
            likes=count(tweet.get("likes")),
            reposts=count(tweet.get("retweets")),
            replies=count(tweet.get("replies")),
            views=count(tweet.get("views")),
        ),
        parent=parent,
        quoted=from_fxtwitter(quote, source) if isinstance(quote, dict) else None,
        source=source,
    )


async def _syndication_answer(
    ctx: Context, step: str, post_id: str
) -> dict[str, Any] | StepOutcome:
    base = ctx.settings.base("X_SYNDICATION_URL")
    url = f"{base}/tweet-result?{urlencode({'id': post_id, 'lang': 'en', 'token': token(post_id)})}"
    answer, data = await get_json(ctx.client, step, url)
    if isinstance(data, StepOutcome):
        return data
    if not isinstance(data, dict) or not data:
        return unknown(step, url, answer.status, "bad_answer", "an empty answer")
    kind = data.get("__typename")
    if kind == "TweetTombstone":
        text = _tombstone_text(data)
        return gone(step, url, answer.status, tombstone_reason(text), text)
    if kind == "TweetUnavailable":
        reason = str(data.get("reason") or "")
        if reason in UNAVAILABLE_REASONS:
            return gone(step, url, answer.status, UNAVAILABLE_REASONS[reason], reason)
        why = "login_required" if reason.startswith("Nsfw") else "unavailable"
        return unknown(step, url, answer.status, why, reason or "TweetUnavailable")
    if not data.get("id_str") or not isinstance(data.get("user"), dict):
        return unknown(step, url, answer.status, "bad_answer", "no post in the answer")
    data["_url"] = url
    return data


async def syndication(ctx: Context, ref: PostRef) -> StepOutcome:
    """The syndication endpoint: the post, its parent and quote; more ancestors; the full
    text of a long post from fxtwitter."""
    data = await _syndication_answer(ctx, "syndication", ref.post_id)
    if isinstance(data, StepOutcome):
        return data
    url = str(data.pop("_url"))
    post = from_syndication(data)
    if data.get("note_tweet"):  # a long post: syndication has its first 280 characters
        full = await fxtwitter(ctx, ref)
        if full.post is not None and len(full.post.text) > len(post.text):
            post.text = full.post.text
    await _ancestors(ctx, post)
    return present("syndication", url, 200, post)


async def _ancestors(ctx: Context, post: Post) -> None:
    """Fill in the parents' parents, up to `reply_depth` more requests."""
    current = post.parent
    for _ in range(ctx.settings.reply_depth):
        if current is None or current.unavailable:
            return
        data = await _syndication_answer(ctx, "syndication", current.post_id)
        if isinstance(data, StepOutcome) or not data.get("parent"):
            if isinstance(data, dict) and data.get("in_reply_to_status_id_str"):
                data.pop("_url", None)
                current.parent = from_syndication(data).parent
            return
        data.pop("_url", None)
        current.parent = from_syndication(data["parent"])
        current = current.parent


async def fxtwitter(ctx: Context, ref: PostRef) -> StepOutcome:
    """The fxtwitter API: `{code, message, tweet}`."""
    step = "fxtwitter"
    url = f"{ctx.settings.base('FXTWITTER_API_URL')}/{ref.handle or 'i'}/status/{ref.post_id}"
    answer = await ctx.client.get(url, {"Accept": "application/json"})
    data = parse_json(step, answer) if answer.error is None else None
    if isinstance(data, dict) and data.get("code") in (401, 404):  # fxtwitter's own words
        reason = "private" if data["code"] == 401 else "not_found"
        return gone(step, url, answer.status, reason, str(data.get("message") or ""))
    judged = judge(step, answer)
    if judged is not None or isinstance(data, StepOutcome):
        return judged or data  # type: ignore[return-value]
    tweet = data.get("tweet") if isinstance(data, dict) else None
    if not isinstance(tweet, dict) or not tweet.get("id"):
        message = str(data.get("message") if isinstance(data, dict) else "")
        return unknown(step, url, answer.status, "bad_answer", message or "no tweet in the answer")
    return present(step, url, answer.status, from_fxtwitter(tweet))


CHAIN: Chain = (("syndication", syndication), ("fxtwitter", fxtwitter))
