"""Reddit: what a fetched page is (the thread, a block page, a login wall, the over-18 gate)
and the thread from the permalink's `.json` (post + comments) as metadata and readable HTML.

The JSON is the public comment-thread response `[<t3 listing>, <t1/more listing>]`
(`https://www.reddit.com/r/<sub>/comments/<id>/<slug>/.json?raw_json=1`). Bodies come as
Markdown (`selftext`, `body`) and as rendered HTML (`selftext_html`, `body_html`); the HTML
is used (sanitized later by the readable plugin), the Markdown when it is missing.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from shared.content.metadata import PageMetadata
from shared.platforms.facts import reddit_site as facts

Verdict = Literal["ok", "rate_limited", "blocked", "login", "over18", "not_found", "error"]
BLOCK_MARKERS = re.compile(
    r"whoa there, pardner|you've been blocked by network security|"
    r"your request has been blocked|too many requests|blocked due to|prove your humanity",
    re.I,
)
LOGIN_MARKERS = re.compile(
    r"<title>\s*(reddit\s*-\s*)?(log ?in|sign ?in)|please log in to continue|"
    r"log in to continue|you must be logged in",
    re.I,
)
OVER18_MARKERS = re.compile(
    r"you must be 18\+|over18|are you over eighteen|mature content|nsfw community", re.I
)
THREAD_MARKERS = re.compile(r"/comments/[a-z0-9]+", re.I)
COMMENTS_PATH = re.compile(r"^(/r/[^/]+)?/comments/([a-z0-9]+)", re.I)


def is_reddit(url: str) -> bool:
    """True for a link on one of Reddit's domains (or below: its short links too)."""
    host = (urlsplit(url).hostname or "").lower()
    return any(host == h or host.endswith("." + h) for h in facts.DOMAINS)


def thread_path(url: str) -> str | None:
    """The permalink path (`/r/<sub>/comments/<id>/<slug>/[<comment>/]`) of a thread link,
    or None when the link is not a thread (a subreddit, a user page, a redd.it short link)."""
    path = urlsplit(url).path or "/"
    if not COMMENTS_PATH.match(path):
        return None
    return path if path.endswith("/") else path + "/"


def on_host(base: str, url: str, json_suffix: bool = False) -> str:
    """The link's path and query on another host (`base` = scheme://host[:port][/prefix]);
    with `json_suffix`, the permalink's `.json` (`raw_json=1`: no HTML escaping)."""
    parts = urlsplit(url)
    path = parts.path or "/"
    query = parts.query
    if json_suffix:
        path = path.rstrip("/") + "/.json"
        query = "raw_json=1"
    base_parts = urlsplit(base)
    prefix = base_parts.path.rstrip("/")
    return urlunsplit((base_parts.scheme, base_parts.netloc, prefix + path, query, ""))


def classify_page(status: int, final_url: str, body: str) -> Verdict:
    """What a fetched Reddit HTML page is: the thread (`ok`) or what stands in its way."""
    path = urlsplit(final_url).path.lower()
    head = body[:200_000]
    if status == 429:  # too many requests: its domain backs off (not a block page)
        return "rate_limited"
    if status == 403 or BLOCK_MARKERS.search(head):
        return "blocked"
    if "/login" in path or "/account/login" in path or LOGIN_MARKERS.search(head[:20_000]):
        return "login"
    if "over18" in path or (OVER18_MARKERS.search(head) and not THREAD_MARKERS.search(head)):
        return "over18"
    if status == 404:
        return "not_found"
    if status >= 400 or not body.strip():
        return "error"
    return "ok"


@dataclass(frozen=True)
class Comment:
    """One comment of the thread, with its replies."""

    author: str
    body_html: str
    created_utc: float | None
    score: int | None
    replies: list[Comment] = field(default_factory=list)
    id: str = ""
    body_text: str = ""
    """The body as the author wrote it (Markdown); `[deleted]` / `[removed]` as shown."""


@dataclass(frozen=True)
class Thread:
    """The post and its comment tree (`more` stubs are counted, not followed)."""

    title: str
    author: str
    subreddit: str
    permalink: str
    url: str
    body_html: str
    created_utc: float | None
    over_18: bool
    comments: list[Comment]
    more: int
    has_video: bool = False
    """A Reddit-hosted video post (`is_video`, or a `reddit_video` in its media): the writer
    gives such a link a media job."""
    id: str = ""
    body_text: str = ""
    """The self text as the author wrote it (Markdown); `[deleted]` / `[removed]` as shown."""
    score: int | None = None
    num_comments: int | None = None
    removed_by: str | None = None
    """`removed_by_category`: moderator, deleted, author, reddit, copyright_takedown ..."""
    images: list[tuple[str, int | None, int | None]] = field(default_factory=list)
    """Full-size images: a gallery's, an image post's, else the preview's (url, w, h)."""
    author_id: str | None = None


class NotAThread(ValueError):
    """The JSON is not a Reddit comment-thread response."""


def _body(data: dict[str, Any], html_key: str, text_key: str) -> str:
    rendered = data.get(html_key)
    if isinstance(rendered, str) and rendered.strip():
        return html.unescape(rendered) if "&lt;" in rendered[:200] else rendered
    text = data.get(text_key)
    if isinstance(text, str) and text.strip():
        return "".join(f"<p>{html.escape(p)}</p>" for p in text.split("\n\n") if p.strip())
    return ""


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _comments(listing: Any) -> tuple[list[Comment], int]:
    found: list[Comment] = []
    more = 0
    children = listing.get("data", {}).get("children", []) if isinstance(listing, dict) else []
    for child in children:
        if not isinstance(child, dict):
            continue
        data = child.get("data") or {}
        if child.get("kind") == "more":
            more += int(data.get("count") or len(data.get("children") or []))
            continue
        if child.get("kind") != "t1":
            continue
        replies, deeper = _comments(data.get("replies"))
        more += deeper
        score = data.get("score")
        found.append(
            Comment(
                author=str(data.get("author") or "[deleted]"),
                body_html=_body(data, "body_html", "body"),
                created_utc=_number(data.get("created_utc")),
                score=score if isinstance(score, int) else None,
                replies=replies,
                id=str(data.get("id") or ""),
                body_text=str(data.get("body") or ""),
            )
        )
    return found, more


def _is_video(post: dict[str, Any]) -> bool:
    """Whether a post (or the post it crossposts) is a Reddit-hosted video."""
    if post.get("is_video") is True:
        return True
    for key in ("secure_media", "media"):
        media = post.get(key)
        if isinstance(media, dict) and isinstance(media.get("reddit_video"), dict):
            return True
    parents = post.get("crosspost_parent_list")
    return isinstance(parents, list) and any(
        isinstance(parent, dict) and _is_video(parent) for parent in parents[:3]
    )


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _images(post: dict[str, Any]) -> list[tuple[str, int | None, int | None]]:
    """A post's images at full size: its gallery's (in order), an i.redd.it image, else its
    preview's source image."""
    found: list[tuple[str, int | None, int | None]] = []
    meta = _dict(post.get("media_metadata"))
    gallery = _dict(post.get("gallery_data"))
    order = [i.get("media_id") for i in gallery.get("items") or [] if isinstance(i, dict)]
    for media_id in order or list(meta):
        item = meta.get(media_id) if isinstance(media_id, str) else None
        source = item.get("s") if isinstance(item, dict) else None
        if isinstance(source, dict) and isinstance(source.get("u"), str):
            found.append((html.unescape(source["u"]), source.get("x"), source.get("y")))
    if found:
        return found
    link = str(post.get("url_overridden_by_dest") or post.get("url") or "")
    if post.get("post_hint") == "image" or re.search(r"//i\.redd\.it/", link):
        return [(link, None, None)]
    preview = _dict(post.get("preview"))
    for image in preview.get("images") or []:
        source = image.get("source") if isinstance(image, dict) else None
        if isinstance(source, dict) and isinstance(source.get("url"), str):
            found.append((html.unescape(source["url"]), source.get("width"), source.get("height")))
    return found[:1]


def parse_thread(data: Any) -> Thread:
    """The thread of a `.json` response (raises NotAThread for anything else)."""
    if not (isinstance(data, list) and len(data) >= 1 and isinstance(data[0], dict)):
        raise NotAThread("not a [post listing, comment listing] pair")
    children = data[0].get("data", {}).get("children", [])
    if not children or children[0].get("kind") != "t3":
        raise NotAThread("first listing holds no t3 post")
    post = children[0].get("data") or {}
    comments, more = _comments(data[1]) if len(data) > 1 else ([], 0)
    return Thread(
        title=str(post.get("title") or ""),
        author=str(post.get("author") or "[deleted]"),
        subreddit=str(
            post.get("subreddit_name_prefixed")
            or (f"r/{post['subreddit']}" if post.get("subreddit") else "")
        ),
        permalink=str(post.get("permalink") or ""),
        url=str(post.get("url") or ""),
        body_html=_body(post, "selftext_html", "selftext"),
        created_utc=_number(post.get("created_utc")),
        over_18=bool(post.get("over_18")),
        comments=comments,
        more=more,
        has_video=_is_video(post),
        id=str(post.get("id") or ""),
        body_text=str(post.get("selftext") or ""),
        score=post["score"] if isinstance(post.get("score"), int) else None,
        num_comments=post["num_comments"] if isinstance(post.get("num_comments"), int) else None,
        removed_by=str(post["removed_by_category"]) if post.get("removed_by_category") else None,
        images=_images(post),
        author_id=str(post["author_fullname"]) if post.get("author_fullname") else None,
    )


def _iso(ts: float | None) -> str | None:
    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z") if ts else None


def thread_metadata(thread: Thread) -> PageMetadata:
    """The post's metadata (title, author u/..., date, subreddit as site name)."""
    description = re.sub(r"<[^>]+>", " ", thread.body_html)
    return PageMetadata(
        title=thread.title or None,
        author=thread.author if thread.author != "[deleted]" else None,
        published_at=_iso(thread.created_utc),
        site_name=thread.subreddit or "Reddit",
        description=" ".join(html.unescape(description).split())[:300] or None,
        canonical_url=facts.SITE.origin + thread.permalink if thread.permalink else None,
    )


def _comment_html(comment: Comment, depth: int, out: list[str]) -> None:
    when = _iso(comment.created_utc)
    stamp = f' <time datetime="{when}">{when[:10]}</time>' if when else ""
    out.append(f"<blockquote><p><b>u/{html.escape(comment.author)}</b>{stamp}</p>")
    out.append(comment.body_html)
    for reply in comment.replies:
        _comment_html(reply, depth + 1, out)
    out.append("</blockquote>")


def thread_html(thread: Thread) -> str:
    """The thread as one readable HTML article: the post, then the comment tree as nested
    quotes (sanitized by the readable plugin like any article)."""
    out = [f"<article><h1>{html.escape(thread.title)}</h1>"]
    byline = f"u/{thread.author} in {thread.subreddit}"
    when = _iso(thread.created_utc)
    out.append(f"<p>{html.escape(byline)}{', ' + when[:10] if when else ''}</p>")
    if thread.url and thread.permalink and thread.permalink not in thread.url:
        out.append(f'<p><a href="{html.escape(thread.url, quote=True)}">'
                   f"{html.escape(thread.url)}</a></p>")  # fmt: skip
    out.append(thread.body_html)
    if thread.comments:
        out.append("<section><h2>Comments</h2>")
        for comment in thread.comments:
            _comment_html(comment, 0, out)
        if thread.more:
            out.append(f"<p>({thread.more} more comments not loaded)</p>")
        out.append("</section>")
    out.append("</article>")
    return "\n".join(out)
