"""Mastodon: a status by its instance's public API, `GET <instance>/api/v1/statuses/<id>`
(no login; `MASTODON_API_URL` when set, else the link's own instance): text (the content's
HTML as text, a content warning above it), author, time, language, counts, media
attachments (images at full size; a video's poster), and the status it replies to, up to
`MASTODON_REPLY_DEPTH` ancestors, each asked of the same API. The answer is kept whole in the
hook's WARC. A 404 is `gone` (a deleted status, or one the instance no longer shows
logged-out); 429 and 5xx are `unknown` and retried (shared.hooks.error_codes). Which links
are Mastodon's: shared/platforms/facts/mastodon_site.py."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from shared.platforms.chain import Chain, Context, PostRef
from shared.platforms.embeds import parse_page, text_of
from shared.platforms.facts import mastodon_site as facts
from shared.platforms.http import get_json
from shared.platforms.outcome import StepOutcome, present, unknown
from shared.platforms.post import Author, Counts, MediaKind, Post, PostMedia, count, iso_utc

PLATFORM = "mastodon"
BASES: tuple[str, ...] = ("MASTODON_API_URL",)
"""The settings naming its API base URLs (empty: the link's own instance)."""
STEP = "status-api"
MEDIA_KINDS: dict[str, MediaKind] = {
    "image": "image",
    "gifv": "gif",
    "video": "video",
    "audio": "audio",
}
"""A media attachment's `type` -> the post's media kind (`unknown` is left out)."""


def recognise(url: str) -> PostRef | None:
    """A status URL's shape (`/@<user>/<id>`, `/users/<user>/statuses/<id>`) on any host:
    whether the host is an instance is the registry's question (`MASTODON_INSTANCES`)."""
    path = urlsplit(url).path or "/"
    for pattern in facts.STATUS_PATHS:
        m = pattern.match(path)
        if m:
            return PostRef(PLATFORM, m.group("id"), url, handle=m.group("handle"))
    return None


def api_base(ctx: Context, ref: PostRef) -> str:
    """Where the status API is asked: MASTODON_API_URL, else the link's instance."""
    base = ctx.settings.base("MASTODON_API_URL")
    if base:
        return base
    parts = urlsplit(ref.url)
    return f"{parts.scheme}://{parts.netloc}"


def _text(status: dict[str, Any]) -> str:
    """The content as text (links in full: Mastodon hides their middle in spans, not in
    the text), its content warning first."""
    root = parse_page(str(status.get("content") or "")) if status.get("content") else None
    text = text_of(root) if root is not None else ""
    warning = str(status.get("spoiler_text") or "").strip()
    return f"{warning}\n\n{text}".strip() if warning else text


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _media(attachment: Any) -> PostMedia | None:
    if not isinstance(attachment, dict):
        return None
    kind = MEDIA_KINDS.get(str(attachment.get("type")))
    url = attachment.get("url") or attachment.get("remote_url")
    if kind is None or not isinstance(url, str):
        return None
    original = _dict(_dict(attachment.get("meta")).get("original"))
    preview = attachment.get("preview_url")
    return PostMedia(
        kind=kind,
        url=url,
        poster=preview if kind != "image" and isinstance(preview, str) else None,
        alt=attachment.get("description") or None,
        width=count(original.get("width")),
        height=count(original.get("height")),
        duration_s=original.get("duration"),
    )


def from_status(status: dict[str, Any], fallback_url: str) -> Post:
    """A post from a Status entity (a boost: the status it boosts)."""
    if isinstance(status.get("reblog"), dict):
        status = status["reblog"]
    account = _dict(status.get("account"))
    media = [m for m in (_media(a) for a in status.get("media_attachments") or []) if m]
    return Post(
        platform=PLATFORM,
        post_id=str(status.get("id") or ""),
        url=str(status.get("url") or status.get("uri") or fallback_url),
        author=Author(
            name=account.get("display_name") or account.get("username") or None,
            handle=account.get("acct") or None,
            id=str(account["id"]) if account.get("id") else None,
            url=account.get("url") or None,
        ),
        text=_text(status),
        created_at=iso_utc(status.get("created_at")),
        language=status.get("language") or None,
        media=media,
        counts=Counts(
            likes=count(status.get("favourites_count")),
            reposts=count(status.get("reblogs_count")),
            replies=count(status.get("replies_count")),
        ),
        source=STEP,
    )


async def _status(ctx: Context, ref: PostRef, post_id: str) -> tuple[int | None, Any]:
    url = f"{api_base(ctx, ref)}/api/v1/statuses/{post_id}"
    answer, data = await get_json(ctx.client, STEP, url)
    return answer.status, data


async def status_api(ctx: Context, ref: PostRef) -> StepOutcome:
    """The status, then the statuses it replies to (up to the reply depth)."""
    status, data = await _status(ctx, ref, ref.post_id)
    if isinstance(data, StepOutcome):
        return data
    if not isinstance(data, dict) or not data.get("id"):
        return unknown(STEP, ref.url, status, "bad_answer", "no status in the answer")
    post = from_status(data, ref.url)
    child, parent_id = post, data.get("in_reply_to_id")
    for _ in range(ctx.settings.reply_depth):
        if not parent_id:
            break
        _, parent = await _status(ctx, ref, str(parent_id))
        if not isinstance(parent, dict) or not parent.get("id"):
            break  # the thread above is not ours to keep; the status itself is
        child.parent = from_status(parent, ref.url)
        child, parent_id = child.parent, parent.get("in_reply_to_id")
    return present(STEP, ref.url, status, post)


CHAIN: Chain = ((STEP, status_api),)
