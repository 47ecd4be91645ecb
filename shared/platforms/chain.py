"""Running a platform's chain: its steps in order until one finds the post (`present`) or
the platform says it is gone; a step that cannot tell (`unknown`) hands over to the next.

A step is `async (ctx, ref) -> StepOutcome` and never raises: anything a step did not
expect becomes `unknown` with the exception's text, so a bug in one step leaves the next
one its chance and the report says what happened. The capture hooks run a chain with the
hook's folder (`Context.folder`; the post's images are then stored, `store_media`); a
liveness check runs the same steps without one.

A step that keeps files of its own in that folder is declared `Keeping` (Reddit's thread
JSON keeps `thread.json`, its pages `page.html`); one that is there for its files alone
(`capture_only`: a page, not the post) runs in a capture only, for a link that names no post
too, and not when an earlier step already kept its files (the same page from another host).
An answer that asks not to be archived (`declined`, X-No-Archive) ends the chain: the
capture then keeps nothing.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from shared.cookies import CookieSet
from shared.filehash import sha256_file
from shared.platforms.http import Client
from shared.platforms.outcome import DECLINED, ChainResult, StepOutcome, unknown
from shared.platforms.post import Post, PostMedia
from shared.platforms.ytdlp import YtdlpOptions


@dataclass(frozen=True)
class PostRef:
    """What a link names: the platform's id of the post, and what else its URL says."""

    platform: str
    post_id: str
    """Empty for a link that names no post (a subreddit: only `capture_only` steps run)."""
    url: str
    """The link (canonical form)."""
    handle: str | None = None
    """The author's handle when the URL names it (X, Bluesky, TikTok, Instagram ...)."""
    kind: str = "post"
    """post, photo, video, short, reel ... as the URL says."""


@dataclass(frozen=True)
class Settings:
    """What the steps may need, read once from the hook's (or the check's) settings."""

    user_agent: str
    allow_private: bool = False
    bases: Mapping[str, str] = field(default_factory=dict)
    """API base URLs by setting name (X_SYNDICATION_URL, BLUESKY_APPVIEW_URL ...)."""
    cookies: CookieSet | None = None
    replies: int = 20
    """Replies (comments) kept at most, where the platform gives them."""
    reply_depth: int = 2
    """Levels of replies kept (1: direct replies only)."""
    socket_timeout: float = 20.0
    comments: int = 0
    """YouTube's top comments asked for (0: none)."""
    steps: tuple[str, ...] = ()
    """The steps to run, by name (`<P>_STEPS`); empty: the whole chain."""

    def base(self, name: str) -> str:
        """An API base, without a trailing slash."""
        return self.bases[name].rstrip("/")

    def ytdlp(self) -> YtdlpOptions:
        """yt-dlp's options from these settings."""
        return YtdlpOptions(
            user_agent=self.user_agent,
            socket_timeout=self.socket_timeout,
            allow_private=self.allow_private,
            cookies=self.cookies,
            comments=self.comments,
        )


@dataclass
class Context:
    """One run of a chain: its settings and its HTTP client."""

    settings: Settings
    client: Client
    folder: Path | None = None
    """The capture hook's folder, where `Keeping` steps keep their files; None in a liveness
    check."""


class Step(Protocol):
    """One way of getting the post."""

    def __call__(self, ctx: Context, ref: PostRef) -> Awaitable[StepOutcome]: ...


@dataclass(frozen=True)
class Keeping:
    """A step that keeps files in the capture's folder (`Context.folder`), and says which
    (its outcome's `kept` names those it wrote)."""

    run: Step
    files: tuple[str, ...]
    """What it may write there: deleted again when an answer asks not to be archived."""
    capture_only: bool = False
    """It is there for its files alone (a page, not the post): a liveness check (no folder)
    skips it, a link that names no post still gets it, and a capture skips it once earlier
    steps kept all its files."""

    def __call__(self, ctx: Context, ref: PostRef) -> Awaitable[StepOutcome]:
        return self.run(ctx, ref)


Chain = Sequence[tuple[str, Step]]


def kept_files(chain: Chain) -> tuple[str, ...]:
    """Every file the chain's `Keeping` steps may write."""
    return tuple(f for _, s in chain if isinstance(s, Keeping) for f in s.files)


def _runs(step: Step, ctx: Context, ref: PostRef, result: ChainResult) -> bool:
    """Whether the step has anything to do in this run."""
    if isinstance(step, Keeping) and step.capture_only:
        return ctx.folder is not None and not set(step.files) <= set(result.kept)
    return bool(ref.post_id)


async def run_chain(ctx: Context, ref: PostRef, chain: Chain) -> ChainResult:
    """Every step in order until one is `present` or `gone`, or an answer declined."""
    result = ChainResult(ref.platform, ref.url)
    wanted = ctx.settings.steps
    for name, step in chain:
        if (wanted and name not in wanted) or not _runs(step, ctx, ref, result):
            continue
        try:
            outcome = await step(ctx, ref)
        except Exception as exc:  # a step's own bug must not hide the next step's answer
            outcome = unknown(name, ref.url, None, "failed", f"{type(exc).__name__}: {exc}")
        result.steps.append(outcome)
        if outcome.verdict in ("present", "gone") or outcome.evidence.reason == DECLINED:
            break
    return result


def _suffix(content_type: str, url: str) -> str:
    ext = mimetypes.guess_extension(content_type.split(";")[0].strip()) if content_type else None
    if ext in (".jpe", ".jpeg"):
        ext = ".jpg"
    if not ext:
        ext = Path(url.split("?")[0]).suffix[:6] or ".bin"
    return ext


async def store_media(client: Client, post: Post, folder: Path, prefix: str = "media") -> Post:
    """Download every image of the post (and of the posts nested in it) and every video's
    poster into `folder/<prefix>/`, at full size, through the address-checked fetch: each
    media item gets `file` (or `poster_file`) or the `error` why not. Videos themselves are
    left to the media service."""
    wanted: list[tuple[PostMedia, str, str]] = []  # (item, attribute, url)
    for inner in post.walk():
        for item in inner.media:
            if item.kind == "image" and item.file is None:
                wanted.append((item, "file", item.url))
            elif item.poster and item.poster_file is None:
                wanted.append((item, "poster_file", item.poster))
    seen: dict[str, int] = {}
    jobs: list[tuple[str, Path]] = []
    for _, _, url in wanted:
        if url not in seen:
            seen[url] = len(jobs)
            jobs.append((url, folder / prefix / f"{len(jobs) + 1}.part"))
    downloads = await client.gather_downloads(jobs)
    names: dict[int, dict[str, Any]] = {}
    for i, got in enumerate(downloads):
        if got.path is None:
            names[i] = {"error": got.error}
            continue
        final = got.path.with_suffix(_suffix(got.content_type, got.url))
        got.path.rename(final)
        names[i] = {
            "file": final.relative_to(folder).as_posix(),
            "content_type": got.content_type,
            "bytes": got.bytes,
            "sha256": sha256_file(final)[1],
        }
    for item, attribute, url in wanted:
        facts = names[seen[url]]
        if "error" in facts:
            if attribute == "file":
                item.error = str(facts["error"])
            continue
        setattr(item, attribute, facts["file"])
        if attribute == "file":
            item.content_type, item.bytes, item.sha256 = (
                facts["content_type"],
                facts["bytes"],
                facts["sha256"],
            )
    return post
