"""The two hooks of a platform plugin (`plugins/<platform>/`), as functions the hook files
call: `api_main` (step 1, before the browser: the platform's API steps) and `page_main`
(step 7, after the browser's captures: the post as the rendered page shows it, when no API
step found it).

Both keep what they found in the hook's folder: `post.json` (kind `post`), the post's images
under `media/` (kind `post_media`), `<platform>.json` (every step's outcome and evidence,
kind `post_sources`) and `<platform>.warc.gz` (every exchange), and the API hook what its
chain's `Keeping` steps keep (Reddit's page and thread files). A Post record carries the
post to the writer. The API hook succeeds when a step found the post or kept its files; an
answer asking not to be archived (a `declined` step) ends it `E_<PLUGIN>_DECLINED` with
nothing kept. The site's cookies (COOKIES_DIR) go to yt-dlp and to the steps' own requests
of the site's hosts (`client`: shared.platforms.http with the CookieSet); their values are
scrubbed from everything written (a platform whose capture sends none, Reddit's, declares
`CAPTURE_COOKIES = False`: its liveness checks still use them), and a login wall met
although they were sent is `E_<PLUGIN>_LOGGED_OUT` (the operator's session expired; said by
yt-dlp and by the browser's page, not yet by an HTTP step).

Settings come from the plugin's config.json (shared.hooks.config.hook_settings):
`<P>_REQUEST_TIMEOUT`, `<P>_MAX_BYTES`, `<P>_MEDIA_MAX_BYTES`, `<P>_REPLY_DEPTH`,
`<P>_STEPS` (`BLUESKY_REPLIES` for the one platform whose steps keep replies: the others' APIs
give none, and YouTube's comments are `YOUTUBE_COMMENTS`), the platform's API base URLs, USER_AGENT,
ALLOW_PRIVATE_TARGETS and COOKIES_DIR.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from shared.cookies import CookieSet, load
from shared.fetching.exchange import FetchLimits
from shared.hooks.config import env_prefix, hook_settings
from shared.hooks.error_codes import LOGIN_REASONS, code, retry_worthy
from shared.hooks.records import ArchiveResultRecord, PostRecord, emit
from shared.platforms.chain import (
    Context,
    PostRef,
    Settings,
    kept_files,
    run_chain,
    store_media,
)
from shared.platforms.chains import PLATFORMS
from shared.platforms.http import Client, warc_log
from shared.platforms.outcome import ChainResult
from shared.platforms.page import from_page
from shared.platforms.post import Post

POST_FILE = "post.json"
SOFTWARE = "discourse-link-archiver platform steps (warcio)"


def _start(hook_file: str) -> tuple[str, str, PostRef | None]:
    """(plugin, link, the post it names) of a hook run."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    args, _ = parser.parse_known_args()
    plugin = Path(hook_file).resolve().parent.name
    ref = PLATFORMS[plugin].capture_ref(str(args.url))
    if ref is None:
        emit(ArchiveResultRecord(status="skipped", output_str=f"not a {plugin} post link"))
    return plugin, str(args.url), ref


def settings(plugin: str, values: Mapping[str, Any], bases: Sequence[str], url: str) -> Settings:
    """The steps' settings from the plugin's settings."""
    p = env_prefix(plugin)
    return Settings(
        user_agent=str(values["USER_AGENT"]),
        allow_private=bool(values["ALLOW_PRIVATE_TARGETS"]),
        bases={name: str(values[name]) for name in bases},
        cookies=load(str(values["COOKIES_DIR"]) or None, url),
        replies=int(values.get(f"{p}_REPLIES") or 0),  # Bluesky's alone keeps replies
        reply_depth=int(values[f"{p}_REPLY_DEPTH"]),
        socket_timeout=float(values[f"{p}_REQUEST_TIMEOUT"]),
        comments=int(values.get(f"{p}_COMMENTS") or 0),  # YouTube's alone
        steps=tuple(n.strip() for n in str(values[f"{p}_STEPS"]).split(",") if n.strip()),
    )


def client(plugin: str, values: Mapping[str, Any], s: Settings, warc: Any) -> Client:
    """The HTTP client of the hook's steps, with the plugin's caps."""
    p = env_prefix(plugin)
    each = float(values[f"{p}_REQUEST_TIMEOUT"])
    limits = FetchLimits(
        total_timeout=each,
        header_timeout=each,
        idle_timeout=min(each, 10.0),
        connect_timeout=min(each, 10.0),
        max_bytes=int(values[f"{p}_MAX_BYTES"]),
        max_redirects=5,
    )
    return Client(
        limits,
        user_agent=s.user_agent,
        allow_private=s.allow_private,
        warc=warc,
        media_max_bytes=int(values[f"{p}_MEDIA_MAX_BYTES"]),
        cookies=s.cookies,
    )


def _write_json(path: Path, data: Any, cookies: CookieSet | None) -> None:
    text = json.dumps(data, indent=1, ensure_ascii=False)
    path.write_text(cookies.scrub(text) if cookies else text, encoding="utf-8")


def keep_post(post: Post, cookies: CookieSet | None) -> None:
    """post.json and the Post record."""
    if cookies:
        post = Post.model_validate_json(cookies.scrub(post.model_dump_json()))
    _write_json(Path(POST_FILE), post.model_dump(mode="json", exclude_none=True), None)
    emit(PostRecord(post=post, file=POST_FILE))


def error_code(plugin: str, result: ChainResult, cookies_sent: bool) -> str:
    """The code when no step found the post: a login wall met although the step sent the
    operator's cookies (yt-dlp says so itself; the browser's page when navigate.json says
    the context had them) is LOGGED_OUT."""
    prefix = env_prefix(plugin)
    step = result.deciding
    if cookies_sent and step is not None and step.evidence.reason in LOGIN_REASONS:
        return code(prefix, "LOGGED_OUT")
    ranked = PLATFORMS[plugin].error_code
    if ranked is not None:
        return ranked(result)
    return result.error_code(prefix) or code(prefix, "NO_POST")


def _finish(
    plugin: str, result: ChainResult, cookies: CookieSet | None, cookies_sent: bool = False
) -> int:
    post = result.post
    summary = result.summary()
    if cookies:
        summary = cookies.scrub(summary)
    if post is not None:
        emit(
            ArchiveResultRecord(
                status="succeeded", output_str=f"post via {post.source}: {summary}"[:500]
            )
        )
        return 0
    if result.kept:  # a Keeping step kept its page although no step found a post
        output = f"kept {', '.join(result.kept)}: {summary}"
        emit(ArchiveResultRecord(status="succeeded", output_str=output[:500]))
        return 0
    ending = error_code(plugin, result, cookies_sent)
    print(f"{plugin}: {ending}: {summary}", file=sys.stderr)
    emit(ArchiveResultRecord(status="failed", output_str=summary, error_code=ending,
                             retry_after_s=result.retry_after_s))  # fmt: skip
    return 1 if retry_worthy(ending) else 0


async def _api(plugin: str, ref: PostRef, s: Settings, env: Mapping[str, str]) -> ChainResult:
    with (
        warc_log(Path(f"{plugin}.warc.gz"), SOFTWARE) as warc,
        client(plugin, env, s, warc) as http,
    ):
        result = await run_chain(Context(s, http, Path.cwd()), ref, PLATFORMS[plugin].chain)
        if result.post is not None and result.declined is None:
            await store_media(http, result.post, Path.cwd())
        return result


def _forget(plugin: str) -> None:
    """Delete what the hook wrote before an answer declined: nothing of the link is kept."""
    names = {POST_FILE, "media", f"{plugin}.warc.gz", *kept_files(PLATFORMS[plugin].chain)}
    for name in names:
        path = Path(name)
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def api_main(hook_file: str) -> int:
    """Step 1: the platform's API steps, in order, until one finds the post."""
    plugin, url, ref = _start(hook_file)
    if ref is None:
        return 0
    platform = PLATFORMS[plugin]
    values = hook_settings(hook_file)
    s = settings(plugin, values, platform.bases, url)
    if not platform.capture_cookies:
        s = replace(s, cookies=None)
    result = asyncio.run(_api(plugin, ref, s, values))
    why_not = result.declined
    if why_not is not None:
        _forget(plugin)
        output = f"declined: the page asks not to be archived ({why_not})"
        ending = code(env_prefix(plugin), "DECLINED")
        emit(ArchiveResultRecord(status="failed", output_str=output[:500], error_code=ending))
        return 0
    report = {
        **result.report(),
        "cookies": {"site": s.cookies.site, "count": len(s.cookies.cookies)} if s.cookies else None,
    }
    _write_json(Path(f"{plugin}.json"), report, s.cookies)
    if result.post is not None:
        keep_post(result.post, s.cookies)
    return _finish(plugin, result, s.cookies)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def page_main(hook_file: str) -> int:
    """Step 7: the post as the browser's rendered page shows it, when no API step found it."""
    plugin, url, ref = _start(hook_file)
    if ref is None:
        return 0
    if Path(POST_FILE).exists():
        source = _read_json(Path(POST_FILE)).get("source")
        emit(ArchiveResultRecord(status="skipped", output_str=f"the post came from {source}"))
        return 0
    dom, nav = Path("../dom/dom.html"), _read_json(Path("../navigate/navigate.json"))
    if not dom.is_file():
        emit(ArchiveResultRecord(status="skipped", output_str="no rendered page to read"))
        return 0
    values = hook_settings(hook_file)
    s = settings(plugin, values, PLATFORMS[plugin].bases, url)
    cap = int(values[f"{env_prefix(plugin)}_MAX_BYTES"])
    html = dom.read_bytes()[:cap].decode("utf-8", "replace")
    status = nav.get("status") if isinstance(nav.get("status"), int) else None
    outcome = from_page(ref, html, str(nav.get("final_url") or url), status)
    result = ChainResult(ref.platform, url, [outcome])
    post = outcome.post
    if post is not None:

        async def media(post: Post) -> None:
            with (
                warc_log(Path("page.warc.gz"), SOFTWARE) as warc,
                client(plugin, values, s, warc) as http,
            ):
                await store_media(http, post, Path.cwd(), "page-media")

        asyncio.run(media(post))
        keep_post(post, s.cookies)
    _write_json(Path("page.json"), result.report(), s.cookies)
    return _finish(
        plugin, result, s.cookies, cookies_sent=bool((nav.get("cookies") or {}).get("count"))
    )
