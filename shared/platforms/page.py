"""The last step of every chain: the post as the browser's capture shows it.

Reads the snapshot's rendered DOM (the dom plugin's `dom.html`) and where the browser
ended up (`navigate.json`): a wall (shared.content.walls) is `login_wall` / `consent_wall`
/ `blocked`; otherwise the page's own description of itself (OpenGraph, JSON-LD: the text
in og:description, the author in og:title, the image) is the post, `source: browser`.
"""

from __future__ import annotations

from shared.content.metadata import PageMetadata, extract_metadata
from shared.content.platforms import author_from_title
from shared.content.walls import wall_in_html
from shared.platforms.chain import PostRef
from shared.platforms.outcome import StepOutcome, present, unknown
from shared.platforms.post import Author, Post, PostMedia
from shared.platforms.registry import SITES

STEP = "browser"


def from_page(ref: PostRef, html: str, final_url: str, status: int | None) -> StepOutcome:
    """The post the rendered page shows, or why there is none."""
    if status is not None and status >= 400:
        return unknown(
            STEP,
            final_url,
            status,
            "http_4xx" if status < 500 else "http_5xx",
            f"the browser got HTTP {status}",
        )
    wall = wall_in_html(final_url, html, ref.url)
    if wall is not None:
        return unknown(STEP, final_url, status, wall.reason, wall.why)
    meta = extract_metadata(html, final_url, find_dates=False)
    text = meta.description or ""
    media = [PostMedia(kind="image", url=meta.image)] if meta.image else []
    if not text and not media:
        return unknown(STEP, final_url, status, "no_post", "the page describes no post")
    author = author_from_title(ref.url, meta.title) or meta.author
    post = Post(
        platform=ref.platform,
        post_id=ref.post_id,
        url=ref.url,
        author=Author(name=author, handle=ref.handle),
        text=text,
        created_at=meta.published_at,
        language=meta.language,
        media=media,
        source=STEP,
    )
    return present(STEP, final_url, status, post)


def post_metadata(post: Post) -> PageMetadata:
    """A link's metadata from its post: its own title (YouTube, Reddit), else "Name (@handle)
    on X" (the form shared.content.platforms gives posts' page titles), the author, the time,
    the text as the description, the platform as the site."""
    site = SITES.get(post.platform)
    name = site.title if site is not None else post.platform
    who = post.author.name or post.author.handle
    title = post.title
    if not title and who:
        handle = f" (@{post.author.handle})" if post.author.handle and post.author.name else ""
        title = f"{who}{handle} on {name}"
    return PageMetadata(
        title=title,
        description=" ".join(post.text.split())[:1000] or None,
        author=post.author.name or post.author.handle,
        published_at=post.created_at,
        site_name=name,
        language=post.language,
        canonical_url=post.url,
    )
