"""Reddit: the post from the permalink's thread JSON (the reddit plugin already fetches it;
the JSON is read by shared.platforms.reddit_thread): self text or link, author, time, score, the
comment tree to `reply_depth` levels (at most `replies` comments). `[deleted]` and
`[removed]` are kept as Reddit shows them; a post Reddit marks removed
(`removed_by_category`, or its text and author gone) is `gone`, with what it still shows.
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlsplit

from shared.platforms.chain import Chain, Context, PostRef
from shared.platforms.http import get_json
from shared.platforms.outcome import StepOutcome, gone, present, unknown
from shared.platforms.post import Author, Counts, Post, PostMedia
from shared.platforms.reddit_thread import (
    Comment,
    NotAThread,
    Thread,
    is_reddit,
    on_host,
    parse_thread,
    thread_path,
)

PLATFORM = "reddit"
BASES: tuple[str, ...] = ("REDDIT_JSON_BASE",)
"""The settings naming its API base URLs."""
STEP = "thread-json"
REMOVED_WORDS = ("[removed]", "[deleted]")


def recognise(url: str) -> PostRef | None:
    """A Reddit thread (`/r/<sub>/comments/<id>/...`), or None."""
    if not is_reddit(url):
        return None
    path = thread_path(url)
    if path is None:
        return None
    post_id = path.split("/comments/", 1)[1].split("/", 1)[0]
    return PostRef(PLATFORM, post_id, url)


def _iso(ts: float | None) -> str | None:
    return datetime.fromtimestamp(ts, UTC).isoformat() if ts else None


def _author(name: str, author_id: str | None = None) -> Author:
    if name in REMOVED_WORDS:
        return Author(name=name)
    return Author(
        name=f"u/{name}", handle=name, id=author_id, url=f"https://www.reddit.com/user/{name}/"
    )


def _comment(c: Comment, permalink: str, depth: int, left: list[int]) -> Post:
    post = Post(
        platform=PLATFORM,
        post_id=c.id or "unknown",
        url=f"https://www.reddit.com{permalink}{c.id}/"
        if c.id
        else f"https://www.reddit.com{permalink}",
        author=_author(c.author),
        text=c.body_text,
        created_at=_iso(c.created_utc),
        counts=Counts(likes=c.score if c.score is not None and c.score >= 0 else None),
        source=STEP,
    )
    if depth > 1:
        for reply in c.replies:
            if left[0] <= 0:
                break
            left[0] -= 1
            post.replies.append(_comment(reply, permalink, depth - 1, left))
    return post


def from_thread(thread: Thread, url: str, depth: int = 2, limit: int = 20) -> Post:
    """The post of a thread, with its comment tree cut to `depth` levels and `limit`
    comments."""
    permalink = thread.permalink or urlsplit(url).path
    media = [PostMedia(kind="image", url=u, width=w, height=h) for u, w, h in thread.images]
    if thread.has_video:
        poster = media.pop(0).url if media else None
        media.insert(
            0, PostMedia(kind="video", url=f"https://www.reddit.com{permalink}", poster=poster)
        )
    text = thread.body_text
    link = thread.url if thread.url and permalink not in thread.url else ""
    if link and link not in text and not thread.images:
        text = f"{text}\n\n{link}".strip()
    post = Post(
        platform=PLATFORM,
        post_id=thread.id or "unknown",
        url=f"https://www.reddit.com{permalink}",
        author=_author(thread.author, thread.author_id),
        title=thread.title or None,
        text=text,
        created_at=_iso(thread.created_utc),
        media=media,
        counts=Counts(
            likes=thread.score if thread.score is not None and thread.score >= 0 else None,
            replies=thread.num_comments,
        ),
        source=STEP,
    )
    left = [limit]
    if depth > 0:
        for c in thread.comments:
            if left[0] <= 0:
                break
            left[0] -= 1
            post.replies.append(_comment(c, permalink, depth, left))
    if thread.removed_by:
        post.unavailable = f"removed ({thread.removed_by})"
    elif thread.body_text in REMOVED_WORDS and thread.author in REMOVED_WORDS:
        post.unavailable = thread.body_text
    return post


def outcome(thread: Thread, url: str, status: int | None, depth: int, limit: int) -> StepOutcome:
    """present, or gone with what Reddit still shows of a removed post."""
    post = from_thread(thread, url, depth, limit)
    if post.unavailable:
        reason = "deleted" if thread.removed_by in ("deleted", "author") else "removed"
        return gone(STEP, url, status, reason, post.unavailable, post)
    return present(STEP, url, status, post)


async def thread_json(ctx: Context, ref: PostRef) -> StepOutcome:
    """The permalink's `.json` (REDDIT_JSON_BASE)."""
    url = on_host(ctx.settings.base("REDDIT_JSON_BASE"), ref.url, json_suffix=True)
    answer, data = await get_json(ctx.client, STEP, url)
    if isinstance(data, StepOutcome):
        return data
    try:
        thread = parse_thread(data)
    except NotAThread as exc:
        return unknown(STEP, url, answer.status, "bad_answer", str(exc))
    s = ctx.settings
    return outcome(thread, ref.url, answer.status, s.reply_depth, s.replies)


CHAIN: Chain = ((STEP, thread_json),)
