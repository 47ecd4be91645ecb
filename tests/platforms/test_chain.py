"""shared.platforms.chain.run_chain: which steps run in a capture and in a liveness check
(`Keeping` steps), and an answer that declines ends the chain. The steps here are the
runner's input, written out: each records that it ran and answers as told."""

from __future__ import annotations

import asyncio
from pathlib import Path

from shared.fetching.exchange import FetchLimits
from shared.platforms.chain import (
    Chain,
    Context,
    Keeping,
    PostRef,
    Settings,
    kept_files,
    run_chain,
)
from shared.platforms.http import Client
from shared.platforms.outcome import ChainResult, StepOutcome, declined, kept, present, unknown
from shared.platforms.post import Author, Post

THREAD = PostRef("reddit", "abc", "https://old.reddit.com/r/t/comments/abc/x/")
SUBREDDIT = PostRef("reddit", "", "https://old.reddit.com/r/t/", kind="page")


def page(name: str, ran: list[str], works: bool = True, declines: bool = False) -> Keeping:
    """A capture-only step keeping page.html when it `works`."""

    async def step(ctx: Context, ref: PostRef) -> StepOutcome:
        ran.append(name)
        if declines:
            return declined(name, ref.url, 200, "X-No-Archive: 1")
        if not works:
            return unknown(name, ref.url, 403, "blocked")
        assert ctx.folder is not None
        (ctx.folder / "page.html").write_text(name)
        return kept(name, ref.url, 200, ("page.html",))

    return Keeping(step, ("page.html",), capture_only=True)


def api(name: str, ran: list[str]) -> Keeping:
    """A step finding the post, keeping thread.json in a capture."""

    async def step(ctx: Context, ref: PostRef) -> StepOutcome:
        ran.append(name)
        post = Post(platform="reddit", post_id=ref.post_id, url=ref.url, author=Author(name="a"))
        return present(name, ref.url, 200, post)

    return Keeping(step, ("thread.json",))


def run(chain: Chain, ref: PostRef, folder: Path | None) -> ChainResult:
    async def go() -> ChainResult:
        with Client(FetchLimits(total_timeout=5), user_agent="t", allow_private=True) as c:
            return await run_chain(Context(Settings("t"), c, folder), ref, chain)

    return asyncio.run(go())


def test_a_capture_runs_the_pages_then_the_post(tmp_path: Path) -> None:
    ran: list[str] = []
    chain = (("old", page("old", ran, works=False)), ("www", page("www", ran)),
             ("json", api("json", ran)))  # fmt: skip
    result = run(chain, THREAD, tmp_path)
    assert ran == ["old", "www", "json"]
    assert result.kept == ("page.html",) and result.post is not None
    assert (tmp_path / "page.html").read_text() == "www"
    assert kept_files(chain) == ("page.html", "page.html", "thread.json")


def test_a_page_kept_once_is_not_asked_again(tmp_path: Path) -> None:
    ran: list[str] = []
    chain = (("old", page("old", ran)), ("www", page("www", ran)), ("json", api("json", ran)))
    run(chain, THREAD, tmp_path)
    assert ran == ["old", "json"]


def test_a_liveness_check_asks_only_for_the_post() -> None:
    ran: list[str] = []
    chain = (("old", page("old", ran)), ("www", page("www", ran)), ("json", api("json", ran)))
    result = run(chain, THREAD, None)
    assert ran == ["json"] and result.verdict == "present" and result.kept == ()


def test_a_link_naming_no_post_gets_its_page_alone(tmp_path: Path) -> None:
    ran: list[str] = []
    chain = (("old", page("old", ran)), ("json", api("json", ran)))
    result = run(chain, SUBREDDIT, tmp_path)
    assert ran == ["old"] and result.kept == ("page.html",) and result.post is None


def test_a_declining_answer_ends_the_chain(tmp_path: Path) -> None:
    ran: list[str] = []
    chain = (("old", page("old", ran, declines=True)), ("json", api("json", ran)))
    result = run(chain, THREAD, tmp_path)
    assert ran == ["old"] and result.declined == "X-No-Archive: 1"
    assert result.error_code("REDDIT") == "E_REDDIT_DECLINED"
