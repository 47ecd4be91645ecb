"""Telegram public channel posts: yt-dlp's extraction (a post's video), then the public
embed widget (`<TELEGRAM_EMBED_URL>/<channel>/<id>?embed=1&mode=tme`): author, text (links
as their full URLs), time, views and the photos. The widget says "Post not found" for a
post that is gone."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from shared.platforms.chain import Chain, Context, PostRef
from shared.platforms.embeds import by_class, embed, parse_page, text_of, ytdlp_step
from shared.platforms.facts import telegram_site as facts
from shared.platforms.outcome import StepOutcome, gone, unknown
from shared.platforms.post import Author, Counts, Post, PostMedia, iso_utc

PLATFORM = "telegram"
BASES: tuple[str, ...] = ("TELEGRAM_EMBED_URL",)
"""The settings naming its API base URLs."""
POST_PATH = re.compile(r"^/(?:s/)?(?P<channel>[A-Za-z]\w{3,31})/(?P<id>\d{1,12})/?$")
BACKGROUND = re.compile(r"background-image:\s*url\(['\"]?(?P<url>[^'\")]+)")
VIEWS = re.compile(r"^(?P<n>\d+(?:\.\d+)?)(?P<unit>[KM]?)$")


def recognise(url: str) -> PostRef | None:
    """A post of a public channel (`/<channel>/<id>`, `/s/<channel>/<id>` on its hosts)."""
    parts = urlsplit(url)
    if (parts.hostname or "").lower() not in facts.POST_HOSTS:
        return None
    m = POST_PATH.match(parts.path or "/")
    return PostRef(PLATFORM, m.group("id"), url, m.group("channel")) if m else None


def views(text: str) -> int | None:
    """`12.3K` -> 12300."""
    m = VIEWS.match(text.strip())
    if m is None:
        return None
    return int(float(m.group("n")) * {"": 1, "K": 1000, "M": 1_000_000}[m.group("unit")])


def _text(el: Any) -> str:
    """A message's text: line breaks kept, each link shown as its full URL."""
    for a in el.iter("a"):
        href, shown = a.get("href") or "", (a.text_content() or "").strip()
        if href.startswith("http") and shown and " " not in shown and "." in shown:
            for child in list(a):
                a.remove(child)
            a.text = href
    return text_of(el)


def from_widget(ref: PostRef, html: str) -> Post | StepOutcome | None:
    """The post of an embed widget; "Post not found" as gone; None when there is none."""
    root = parse_page(html)
    if root is None:
        return None
    error = by_class(root, "tgme_widget_message_error")
    if error:
        words = " ".join(error[0].text_content().split())
        if "not found" in words.lower():
            return gone("embed", ref.url, 200, "not_found", words)
        return unknown("embed", ref.url, 200, "unavailable", words)
    message = by_class(root, "tgme_widget_message")
    if not message:
        return None
    msg = message[0]
    owner = by_class(msg, "tgme_widget_message_owner_name")
    texts = by_class(msg, "tgme_widget_message_text")
    stamp = msg.xpath(".//time[@datetime]")
    seen = by_class(msg, "tgme_widget_message_views")
    media = []
    for wrap in by_class(msg, "tgme_widget_message_photo_wrap"):
        m = BACKGROUND.search(wrap.get("style") or "")
        if m:
            media.append(PostMedia(kind="image", url=m.group("url")))
    if by_class(msg, "tgme_widget_message_video_player"):
        media.append(PostMedia(kind="video", url=ref.url))
    channel = ref.handle or ""
    return Post(
        platform=PLATFORM,
        post_id=ref.post_id,
        url=f"https://t.me/{channel}/{ref.post_id}",
        author=Author(
            name=" ".join(owner[0].text_content().split()) if owner else None,
            handle=channel or None,
            url=f"https://t.me/{channel}" if channel else None,
        ),
        text=_text(texts[0]) if texts else "",
        created_at=iso_utc(stamp[0].get("datetime")) if stamp else None,
        media=media,
        counts=Counts(views=views(seen[0].text_content()) if seen else None),
        source="embed",
    )


async def embed_step(ctx: Context, ref: PostRef) -> StepOutcome:
    """The public embed widget."""
    url = f"{ctx.settings.base('TELEGRAM_EMBED_URL')}/{ref.handle}/{ref.post_id}?embed=1&mode=tme"
    return await embed(ctx, ref, url, from_widget)


CHAIN: Chain = (("yt-dlp", ytdlp_step), ("embed", embed_step))
