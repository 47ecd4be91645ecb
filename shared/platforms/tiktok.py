"""TikTok: yt-dlp's extraction (videos), then the post page's own data (the JSON TikTok
rehydrates its page from, `webapp.video-detail`: the item yt-dlp reads, photo slideshows'
images included, which yt-dlp leaves out), then oEmbed for the metadata alone.

The page's `statusCode` says why an item is missing: 10216 (private post) and 10222
(private account) are gone (`private`); 10204 (this address is blocked) and codes not
known here are unknown, recorded with the code.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from shared.platforms.chain import Chain, Context, PostRef
from shared.platforms.embeds import oembed, page, ytdlp_step
from shared.platforms.facts import tiktok_site as facts
from shared.platforms.outcome import StepOutcome, gone, present, unknown
from shared.platforms.post import Author, Counts, Post, PostMedia, count, iso_utc

PLATFORM = "tiktok"
BASES: tuple[str, ...] = ("TIKTOK_WEB_URL", "TIKTOK_OEMBED_URL")
"""The settings naming its API base URLs."""
DATA_SCRIPT = re.compile(
    r'<script[^>]+id="__UNIVERSAL_DATA_FOR_REHYDRATION__"[^>]*>(?P<json>.*?)</script>', re.S
)
GONE_STATUS = {10216: "private", 10222: "private"}


def recognise(url: str) -> PostRef | None:
    """A TikTok video or photo post (`/@handle/video/<id>`, `/@handle/photo/<id>`,
    `/embed/v2/<id>`), or None."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if host not in facts.WEB_HOSTS:
        return None
    path = parts.path or "/"
    m = facts.POST_PATH.match(path)
    if m:
        return PostRef(PLATFORM, m.group("id"), url, m.group("handle"), m.group("kind"))
    e = facts.EMBED_PATH.match(path)
    return PostRef(PLATFORM, e.group("id"), url) if e else None


async def ytdlp(ctx: Context, ref: PostRef) -> StepOutcome:
    """yt-dlp knows TikTok's video posts; a photo post is left to the page's data."""
    if ref.kind == "photo":
        return unknown("yt-dlp", ref.url, None, "unsupported", "yt-dlp reads no photo posts")
    return await ytdlp_step(ctx, ref)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def from_item(item: dict[str, Any], url: str, source: str = "webpage") -> Post:
    """A post from TikTok's item (`itemStruct`): a video, or a photo slideshow's images."""
    author = _dict(item.get("author"))
    handle = author.get("uniqueId") or (
        item.get("author") if isinstance(item.get("author"), str) else None
    )
    stats = _dict(item.get("stats"))
    video = _dict(item.get("video"))
    photos = _dict(item.get("imagePost")).get("images")
    media: list[PostMedia] = []
    for image in photos or []:
        urls = ((image or {}).get("imageURL") or {}).get("urlList") or []
        if urls:
            media.append(
                PostMedia(
                    kind="image",
                    url=str(urls[0]),
                    width=count(image.get("imageWidth")),
                    height=count(image.get("imageHeight")),
                )
            )
    if not media and video:
        media.append(
            PostMedia(
                kind="video",
                url=url,
                poster=video.get("originCover") or video.get("cover") or None,
                width=count(video.get("width")),
                height=count(video.get("height")),
                duration_s=float(video["duration"]) if count(video.get("duration")) else None,
            )
        )
    post_id = str(item.get("id"))
    return Post(
        platform=PLATFORM,
        post_id=post_id,
        url=f"https://www.tiktok.com/@{handle}/{'photo' if photos else 'video'}/{post_id}"
        if handle
        else url,
        author=Author(
            name=author.get("nickname") or None,
            handle=handle,
            id=author.get("id") or None,
            url=f"https://www.tiktok.com/@{handle}" if handle else None,
        ),
        text=str(item.get("desc") or ""),
        created_at=iso_utc(item.get("createTime")),
        language=item.get("textLanguage")
        if item.get("textLanguage") not in (None, "", "un")
        else None,
        media=media,
        counts=Counts(
            likes=count(stats.get("diggCount")),
            reposts=count(stats.get("shareCount")),
            replies=count(stats.get("commentCount")),
            views=count(stats.get("playCount")),
        ),
        source=source,
    )


async def webpage(ctx: Context, ref: PostRef) -> StepOutcome:
    """The post page's rehydration data."""
    step = "webpage"
    path = urlsplit(ref.url).path
    url = f"{ctx.settings.base('TIKTOK_WEB_URL')}{path}"
    answer = await page(ctx, url, step)
    if isinstance(answer, StepOutcome):
        return answer
    m = DATA_SCRIPT.search(answer.text)
    if m is None:
        return unknown(step, url, answer.status, "bad_answer", "no rehydration data in the page")
    try:
        data = json.loads(m.group("json"))
    except ValueError as exc:
        return unknown(step, url, answer.status, "bad_answer", f"malformed JSON: {exc}")
    detail = _dict(_dict(data).get("__DEFAULT_SCOPE__")).get("webapp.video-detail")
    if not isinstance(detail, dict):
        return unknown(step, url, answer.status, "bad_answer", "no video-detail in the data")
    status = detail.get("statusCode")
    item = _dict(detail.get("itemInfo")).get("itemStruct")
    if isinstance(status, int) and status != 0:
        words = f"status code {status} {detail.get('statusMsg') or ''}".strip()
        if status in GONE_STATUS:
            return gone(step, url, answer.status, GONE_STATUS[status], words)
        reason = "blocked" if status == 10204 else "unavailable"
        return unknown(step, url, answer.status, reason, words)
    if not isinstance(item, dict) or not item.get("id"):
        return unknown(step, url, answer.status, "bad_answer", "no item in the data")
    return present(step, url, answer.status, from_item(item, ref.url))


async def oembed_step(ctx: Context, ref: PostRef) -> StepOutcome:
    """TikTok's oEmbed: caption, author and cover."""
    return await oembed(ctx, ref, "TIKTOK_OEMBED_URL")


CHAIN: Chain = (("yt-dlp", ytdlp), ("webpage", webpage), ("oembed", oembed_step))
