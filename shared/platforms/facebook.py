"""Facebook public posts and videos: yt-dlp's extraction, then the public embedded-post
page (`<FACEBOOK_EMBED_URL>/plugins/post.php?href=<link>`): author, text, time and the
first image. Facebook sends anonymous server traffic to its login page: unknown
(`login_wall`), `logged_out` when cookies were sent."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from shared.platforms.chain import Chain, Context, PostRef
from shared.platforms.embeds import by_class, embed, parse_page, text_of, ytdlp_step
from shared.platforms.facts import facebook_site as facts
from shared.platforms.outcome import StepOutcome
from shared.platforms.post import Author, Post, PostMedia, iso_utc

PLATFORM = "facebook"
BASES: tuple[str, ...] = ("FACEBOOK_EMBED_URL",)
"""The settings naming its API base URLs."""
PATHS = (
    re.compile(
        r"^/(?P<page>[\w.-]+)/(?:posts|videos|photos(?:/[\w.]+)?)/(?:[\w.-]+/)?(?P<id>[\w]{5,})"
    ),
    re.compile(r"^/groups/(?P<page>[\w.-]+)/(?:posts|permalink)/(?P<id>\d{5,})"),
    re.compile(r"^/(?:reel|share/[prv])/(?P<id>[\w]{5,})"),
)
QUERY_IDS = ("story_fbid", "fbid", "v")


def recognise(url: str) -> PostRef | None:
    """A public post, photo, video or reel on Facebook (its short `fb.watch` links too), or None."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if host == facts.WATCH_HOST:
        vid = (parts.path or "/").strip("/").split("/")[0]
        return PostRef(PLATFORM, vid, url, kind="video") if vid else None
    if host not in facts.POST_HOSTS:
        return None
    query = parse_qs(parts.query)
    for name in QUERY_IDS:
        if query.get(name, [""])[0].isdigit():
            return PostRef(PLATFORM, query[name][0], url, kind="video" if name == "v" else "post")
    for pattern in PATHS:
        m = pattern.match(parts.path or "/")
        if m:
            page_name = m.groupdict().get("page")
            kind = "video" if "/videos/" in parts.path or "/reel/" in parts.path else "post"
            return PostRef(PLATFORM, m.group("id"), url, page_name, kind)
    return None


def _one(root: Any, xpath: str) -> Any:
    found = root.xpath(xpath)
    return found[0] if found else None


def from_embed(ref: PostRef, html: str) -> Post | None:
    """The post of an embedded-post page, None when it shows none."""
    root = parse_page(html)
    if root is None:
        return None
    body = _one(root, './/*[@data-testid="post_message"]')
    if body is None:
        body = _one(
            root, './/*[contains(concat(" ", normalize-space(@class), " "), " userContent ")]'
        )
    image = _one(root, './/img[contains(@class, "scaledImageFit")]')
    author = next(iter(by_class(root, "fwb")), None)
    stamp = _one(root, ".//abbr[@data-utime]")
    text = text_of(body) if body is not None else ""
    if not text and image is None:
        return None
    return Post(
        platform=PLATFORM,
        post_id=ref.post_id,
        url=ref.url,
        author=Author(
            name=" ".join(author.text_content().split()) if author is not None else None,
            handle=ref.handle,
        ),
        text=text.strip(),
        created_at=iso_utc(stamp.get("data-utime")) if stamp is not None else None,
        media=[PostMedia(kind="image", url=str(image.get("src")), alt=image.get("alt") or None)]
        if image is not None and image.get("src")
        else [],
        source="embed",
    )


async def embed_step(ctx: Context, ref: PostRef) -> StepOutcome:
    """The public embedded-post page."""
    url = (
        f"{ctx.settings.base('FACEBOOK_EMBED_URL')}/plugins/post.php?{urlencode({'href': ref.url})}"
    )
    return await embed(ctx, ref, url, from_embed)


CHAIN: Chain = (("yt-dlp", ytdlp_step), ("embed", embed_step))
