"""Steps shared by several platforms: yt-dlp's extraction, an oEmbed answer (TikTok, Imgur,
Streamable: the metadata alone), and a public embed page read for its text and first image
(Instagram, Facebook, Telegram have their own readers of it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import lxml.html
from lxml import etree

from shared.platforms import ytdlp
from shared.platforms.chain import Context, PostRef
from shared.platforms.http import Answer, get_json, judge
from shared.platforms.outcome import StepOutcome, present, unknown
from shared.platforms.post import Author, Post, PostMedia, count


async def ytdlp_step(ctx: Context, ref: PostRef) -> StepOutcome:
    """yt-dlp's extraction of the link, in-process (no download)."""
    return await ytdlp.step(ref.url, ctx.settings.ytdlp(), ref.platform)


def parse_page(html: str) -> Any:
    """An embed page's element tree (its first 2 MB), None when it is no HTML."""
    try:
        return lxml.html.document_fromstring(html[:2_000_000])
    except (etree.ParserError, ValueError):
        return None


def by_class(root: Any, name: str) -> list[Any]:
    """The elements under `root` with the class `name`."""
    return list(
        root.xpath(f'.//*[contains(concat(" ", normalize-space(@class), " "), " {name} ")]')
    )


def text_of(el: Any) -> str:
    """An element's text with its line breaks (`<br>`, paragraphs) kept and the rest of its
    white space (the markup's own line breaks) collapsed."""
    for br in el.iter("br"):
        br.tail = BREAK + (br.tail or "")
    for p in el.iter("p"):
        p.tail = BREAK + (p.tail or "")
    lines = (" ".join(line.split()) for line in el.text_content().split(BREAK))
    return "\n".join(line for line in lines if line)


BREAK = "\u2028"


def from_oembed(ref: PostRef, data: dict[str, Any], source: str = "oembed") -> Post:
    """A post from an oEmbed answer: title as text, author, the thumbnail as its image."""
    handle = data.get("author_unique_id")
    author_url = data.get("author_url")
    if not handle and isinstance(author_url, str) and "/@" in author_url:
        handle = author_url.rsplit("/@", 1)[-1].strip("/") or None
    media = []
    if isinstance(data.get("thumbnail_url"), str):
        media.append(
            PostMedia(
                kind="image",
                url=data["thumbnail_url"],
                width=count(data.get("thumbnail_width")),
                height=count(data.get("thumbnail_height")),
            )
        )
    return Post(
        platform=ref.platform,
        post_id=str(data.get("embed_product_id") or ref.post_id),
        url=ref.url,
        author=Author(
            name=data.get("author_name") or None,
            handle=handle,
            url=author_url if isinstance(author_url, str) else None,
        ),
        text=str(data.get("title") or ""),
        media=media,
        source=source,
    )


async def oembed(ctx: Context, ref: PostRef, setting: str, step: str = "oembed") -> StepOutcome:
    """`<base>?url=<link>&format=json`: the metadata alone."""
    url = f"{ctx.settings.base(setting)}?{urlencode({'url': ref.url, 'format': 'json'})}"
    answer, data = await get_json(ctx.client, step, url)
    if isinstance(data, StepOutcome):
        return data
    if not isinstance(data, dict) or not (data.get("title") or data.get("author_name")):
        return unknown(step, url, answer.status, "bad_answer", "no post in the oEmbed answer")
    return present(step, url, answer.status, from_oembed(ref, data, step))


async def page(ctx: Context, url: str, step: str) -> Answer | StepOutcome:
    """An HTML page of the platform (an embed page), or the outcome that ends the step."""
    answer = await ctx.client.get(url, {"Accept": "text/html"})
    judged = judge(step, answer)
    if judged is not None:
        return judged
    if answer.content_type not in ("text/html", "application/xhtml+xml", "text/plain"):
        return unknown(step, url, answer.status, "bad_answer", f"{answer.content_type}, not a page")
    return answer


EmbedParser = Callable[[PostRef, str], "Post | StepOutcome | None"]


async def embed(ctx: Context, ref: PostRef, url: str, parse: EmbedParser) -> StepOutcome:
    """A public embed page read by the platform's parser (None: it shows no post)."""
    step = "embed"
    answer = await page(ctx, url, step)
    if isinstance(answer, StepOutcome):
        return answer
    found = parse(ref, answer.text)
    if isinstance(found, StepOutcome):
        return found
    if found is None:
        return unknown(step, url, answer.status, "no_post", "the embed page shows no post")
    return present(step, url, answer.status, found)
