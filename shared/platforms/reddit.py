"""Reddit: its chain is its old.reddit page (`old-page`, then `www-page` when that one is a
block page, a login wall or the over-18 gate: shared.platforms.reddit_thread.classify_page),
kept as `page.html`, then the permalink's `.json` (`thread-json`), which gives the post and,
in a capture, `thread.json`, `thread.html` (the readable plugin's article), `meta.json` (the
metadata plugin's values, `has_video` for a Reddit-hosted video) and the post: self text or
link, author, time, score, the comment tree to `reply_depth` levels (at most `replies`
comments). `[deleted]` and `[removed]` are kept as Reddit shows them; a post Reddit marks
removed (`removed_by_category`, or its text and author gone) is `gone`, with what it still
shows. The pages are a capture's alone (a liveness check asks the JSON); a link that is no
thread (a subreddit, a user page) gets its page only. The capture sends no operator cookies
(the page and thread as anyone sees them), and any answer opting out (X-No-Archive header
or meta) ends it keeping nothing.

A capture that kept nothing ends as Reddit's answers rank (`error_code`): a 429 anywhere is
E_REDDIT_RATE_LIMITED (retried after its Retry-After when longer, and reddit.com backs off);
else a block page anywhere (403 or its words) is E_REDDIT_BLOCKED; else the first error, by
its fetch error kind (E_REDDIT_TIMEOUT, _REFUSED ...) or HTTP status (E_REDDIT_HTTP_5XX,
E_REDDIT_HTTP_410 ...; E_REDDIT_FAILED for an empty page); else E_REDDIT_LOGIN_WALL,
E_REDDIT_AGE_GATE, E_REDDIT_NOT_FOUND.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from shared.fetching import retry_after as retry_wait
from shared.hooks.error_codes import code, http_code
from shared.platforms import kept as files
from shared.platforms.chain import Chain, Context, Keeping, PostRef
from shared.platforms.http import get_json
from shared.platforms.outcome import (
    ChainResult,
    StepOutcome,
    declined,
    gone,
    kept,
    present,
    unknown,
    what_of_reason,
)
from shared.platforms.post import Author, Counts, Post, PostMedia
from shared.platforms.reddit_thread import (
    Comment,
    NotAThread,
    Thread,
    classify_page,
    is_reddit,
    on_host,
    parse_thread,
    thread_html,
    thread_metadata,
    thread_path,
)

PLATFORM = "reddit"
PREFIX = "REDDIT"
BASES: tuple[str, ...] = ("REDDIT_OLD_BASE", "REDDIT_WWW_BASE", "REDDIT_JSON_BASE")
"""The settings naming its base URLs."""
STEP = "thread-json"
OLD_PAGE, WWW_PAGE = "old-page", "www-page"
PAGE_FILE = files.PAGE
THREAD_FILES = ("thread.json", files.ARTICLE, files.METADATA)
CAPTURE_COOKIES = False
"""The page and thread are kept as anyone sees them: no operator cookies in a capture."""
REMOVED_WORDS = ("[removed]", "[deleted]")
FETCH_ERRORS = frozenset(
    {"timeout", "stalled", "truncated", "too_large", "bomb", "not_html", "refused", "dns",
     "redirects", "failed"}
)  # fmt: skip
"""The reasons that are a fetch error's kind (shared.fetching), in lower case."""
PAGE_REASONS = {"rate_limited": "rate_limited", "blocked": "blocked", "login": "login_wall",
                "over18": "age_gate", "not_found": "not_found"}  # fmt: skip
"""A page's verdict (reddit_thread.classify_page) -> its outcome's reason."""


def recognise(url: str) -> PostRef | None:
    """A Reddit thread (`/r/<sub>/comments/<id>/...`), or None."""
    if not is_reddit(url):
        return None
    path = thread_path(url)
    if path is None:
        return None
    post_id = path.split("/comments/", 1)[1].split("/", 1)[0]
    return PostRef(PLATFORM, post_id, url)


def capture_ref(url: str) -> PostRef | None:
    """What a capture starts from: the thread, or any other Reddit link's page alone."""
    if not is_reddit(url):
        return None
    return recognise(url) or PostRef(PLATFORM, "", url, kind="page")


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


def _keep_thread(folder: Path, body: bytes, thread: Thread) -> None:
    """thread.json, thread.html and meta.json."""
    (folder / "thread.json").write_bytes(body)
    (folder / files.ARTICLE).write_text(thread_html(thread), encoding="utf-8")
    meta: dict[str, Any] = {**thread_metadata(thread).as_dict(), "has_video": thread.has_video}
    (folder / files.METADATA).write_text(json.dumps(meta, indent=1, ensure_ascii=False))


async def thread_json(ctx: Context, ref: PostRef) -> StepOutcome:
    """The permalink's `.json` (REDDIT_JSON_BASE); in a capture its files too."""
    url = on_host(ctx.settings.base("REDDIT_JSON_BASE"), ref.url, json_suffix=True)
    answer, data = await get_json(ctx.client, STEP, url)
    if ctx.folder is not None and answer.declined:
        return declined(STEP, url, answer.status, answer.declined)
    if isinstance(data, StepOutcome):
        return data
    try:
        thread = parse_thread(data)
    except NotAThread as exc:
        return unknown(STEP, url, answer.status, "bad_answer", str(exc))
    s = ctx.settings
    found = outcome(thread, ref.url, answer.status, s.reply_depth, s.replies)
    if ctx.folder is None:
        return found
    await asyncio.to_thread(_keep_thread, ctx.folder, answer.body, thread)
    return replace(found, kept=THREAD_FILES)


async def _page(ctx: Context, ref: PostRef, step: str, base: str) -> StepOutcome:
    """The link's HTML page on one of Reddit's hosts, kept as page.html when it is the page."""
    url = on_host(ctx.settings.base(base), ref.url)
    got = await ctx.client.get(url)
    if got.declined:
        return declined(step, url, got.status, got.declined)
    if got.error or got.status is None:
        return unknown(step, url, got.status, (got.error or "failed").lower(), got.message)
    verdict = classify_page(got.status, got.final_url, got.text)
    if verdict == "ok" and ctx.folder is not None:
        await asyncio.to_thread((ctx.folder / PAGE_FILE).write_bytes, got.body)
        return kept(step, url, got.status, (PAGE_FILE,))
    if verdict in PAGE_REASONS:
        wait = retry_wait.of_headers(got.headers) if verdict == "rate_limited" else None
        return unknown(step, url, got.status, PAGE_REASONS[verdict], got.text[:300], wait)
    reason = "http_5xx" if got.status >= 500 else "http_4xx" if got.status >= 400 else "no_answer"
    return unknown(step, url, got.status, reason, got.text[:300])


async def old_page(ctx: Context, ref: PostRef) -> StepOutcome:
    """The page on old.reddit (REDDIT_OLD_BASE): the thread without scripts."""
    return await _page(ctx, ref, OLD_PAGE, "REDDIT_OLD_BASE")


async def www_page(ctx: Context, ref: PostRef) -> StepOutcome:
    """The page on www.reddit (REDDIT_WWW_BASE), when old.reddit's was not it."""
    return await _page(ctx, ref, WWW_PAGE, "REDDIT_WWW_BASE")


def _ranked(step: StepOutcome) -> tuple[str, str | None]:
    """(what the answer was: ok, rate_limited, blocked, error, login, over18, not_found or
    none; the code of an error)."""
    reason, status = step.evidence.reason, step.evidence.status
    if step.post is not None or step.kept:
        return "ok", None
    if reason in FETCH_ERRORS:
        return "error", code(PREFIX, what_of_reason(reason))
    verdict: str
    if step.step == STEP:  # the JSON's status: a 200 that is no thread JSON says nothing
        if status == 200:
            return "none", None
        verdict = classify_page(status, "", "") if status is not None else "error"
    else:
        verdict = next((v for v, r in PAGE_REASONS.items() if r == reason), "error")
    if verdict != "error":
        return verdict, None
    if status is not None and status >= 400:
        return "error", http_code(PREFIX, status)
    return "error", code(PREFIX, "FAILED")


def error_code(result: ChainResult) -> str:
    """The code of a capture that kept nothing: a block page anywhere, else the first
    error, else a login wall, the over-18 gate, not found."""
    ranked = [_ranked(s) for s in result.steps]
    if any(verdict == "rate_limited" for verdict, _ in ranked):
        return code(PREFIX, "RATE_LIMITED")
    if any(verdict == "blocked" for verdict, _ in ranked):
        return code(PREFIX, "BLOCKED")
    failed = next((c for verdict, c in ranked if verdict == "error" and c), None)
    if failed is not None:
        return failed
    verdicts = {verdict for verdict, _ in ranked}
    if "login" in verdicts:
        return code(PREFIX, "LOGIN_WALL")
    if "over18" in verdicts:
        return code(PREFIX, "AGE_GATE")
    return code(PREFIX, "NOT_FOUND")


CHAIN: Chain = (
    (OLD_PAGE, Keeping(old_page, (PAGE_FILE,), capture_only=True)),
    (WWW_PAGE, Keeping(www_page, (PAGE_FILE,), capture_only=True)),
    (STEP, Keeping(thread_json, THREAD_FILES)),
)
"""The page first, as before: a page that opts out ends the capture before the JSON (and
its images) are asked for."""
