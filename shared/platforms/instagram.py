"""Instagram: yt-dlp's extraction (posts, reels, carousels), then the public embed page
(`/p/<shortcode>/embed/captioned/`): the caption and the first image.

Anonymous traffic from a server is mostly sent to `/accounts/login/`: a login redirect is
unknown (`login_wall`), or `logged_out` when the operator's cookies were sent.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from shared.platforms.chain import Chain, Context, PostRef
from shared.platforms.embeds import by_class, embed, parse_page, text_of, ytdlp_step
from shared.platforms.facts import instagram_site as facts
from shared.platforms.outcome import StepOutcome
from shared.platforms.post import Author, Post, PostMedia

PLATFORM = "instagram"
BASES: tuple[str, ...] = ("INSTAGRAM_EMBED_URL",)
"""The settings naming its API base URLs."""


def recognise(url: str) -> PostRef | None:
    """An Instagram post, reel or IGTV video (`/p/<shortcode>/`, `/reel/<shortcode>/` ...)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if host not in facts.POST_HOSTS:
        return None
    m = facts.POST_PATH.match(parts.path or "/")
    if m is None:
        return None
    kind = "reel" if m.group("kind").startswith("reel") else m.group("kind")
    return PostRef(PLATFORM, m.group("code"), url, m.group("handle"), kind)


def _first(root: Any, cls: str) -> Any:
    found = by_class(root, cls)
    return found[0] if found else None


def _largest(img: Any) -> str | None:
    """The widest candidate of an image's srcset, else its src."""
    best, width = str(img.get("src") or "") or None, 0
    for part in str(img.get("srcset") or "").split(","):
        bits = part.strip().split()
        if (
            len(bits) == 2
            and bits[1].endswith("w")
            and bits[1][:-1].isdigit()
            and int(bits[1][:-1]) > width
        ):
            best, width = bits[0], int(bits[1][:-1])
    return best


def from_embed(ref: PostRef, html: str) -> Post | None:
    """The caption, author and first image of an embed page; None when it shows no post."""
    root = parse_page(html)
    if root is None:
        return None
    image = _first(root, "EmbeddedMediaImage")
    caption = _first(root, "Caption")
    handle_el = _first(root, "UsernameText")
    if handle_el is None and caption is not None:
        handle_el = _first(caption, "CaptionUsername")
    handle = " ".join(handle_el.text_content().split()) if handle_el is not None else None
    text = ""
    if caption is not None:
        for drop in ("CaptionUsername", "CaptionComments"):
            el = _first(caption, drop)
            if el is not None:
                el.drop_tree()
        text = text_of(caption)
    src = _largest(image) if image is not None else None
    if not text and not src:
        return None
    media = (
        [PostMedia(kind="image", url=src, alt=image.get("alt") or None)]
        if src and image is not None
        else []
    )
    return Post(
        platform=PLATFORM,
        post_id=ref.post_id,
        url=f"https://www.instagram.com/{'reel' if ref.kind == 'reel' else 'p'}/{ref.post_id}/",
        author=Author(
            handle=handle or ref.handle,
            url=f"https://www.instagram.com/{handle or ref.handle}/"
            if handle or ref.handle
            else None,
        ),
        text=text,
        media=media,
        source="embed",
    )


async def embed_step(ctx: Context, ref: PostRef) -> StepOutcome:
    """The public embed page."""
    url = f"{ctx.settings.base('INSTAGRAM_EMBED_URL')}/p/{ref.post_id}/embed/captioned/"
    return await embed(ctx, ref, url, from_embed)


CHAIN: Chain = (("yt-dlp", ytdlp_step), ("embed", embed_step))
