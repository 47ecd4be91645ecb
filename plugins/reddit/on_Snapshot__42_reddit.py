"""Hook (step 4): a Reddit link's old.reddit page and its permalink's `.json`.

For reddit.com links only (others: `skipped`). The HTML page is asked of REDDIT_OLD_BASE
(old.reddit.com), then of REDDIT_WWW_BASE (www.reddit.com) when the first answer is a block
page, a login wall or the over-18 gate (shared.platforms.reddit_thread.classify_page); the page that
worked is `page.html`. For thread links the permalink's `.json` (REDDIT_JSON_BASE) is kept
as `thread.json` and turned into `thread.html` (post and comment tree, the readable plugin's
article), `meta.json` (title, author, date, subreddit, has_video for a Reddit-hosted video
post: the metadata plugin's values) and the post (shared.platforms.reddit: `post.json`, its
images under `media/`, a Post record; REDDIT_REPLIES comments to REDDIT_REPLY_DEPTH levels).
`reddit.json` records every attempt (URL, status, verdict) and which source succeeded.
Every request goes through shared.fetching: the target policy on every hop (in production
no loopback, private, link-local or metadata address: refused and recorded), connects to
the checked address, timeouts, stall and size rules; every exchange is in `reddit.warc.gz`.

A page or JSON answer that opts out (X-No-Archive header, or the meta tag in the page:
shared.content.no_archive) ends the hook at once: failed, E_REDDIT_DECLINED, not retried,
and nothing kept (no page, no JSON, no post, no WARC, no report).

Outcome: succeeded when the page or the JSON worked (output says which); when neither did,
failed with E_REDDIT_BLOCKED (403/429, a block page), E_REDDIT_<kind> of a fetch error
(TIMEOUT, STALLED, REFUSED, DNS, ...), E_REDDIT_HTTP_<status> of another error answer
(E_REDDIT_HTTP_5XX, E_REDDIT_HTTP_410 ...), E_REDDIT_FAILED for an empty page,
E_REDDIT_LOGIN_WALL, E_REDDIT_AGE_GATE or E_REDDIT_NOT_FOUND. Whether it is retried is the
code's (shared.hooks.error_codes: a 5xx is, a 410 is not); the exit code (1 for a retried
one) says the same and decides nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from shared.hooks.config import hook_settings
from shared.hooks.error_codes import code, http_code, retry_worthy
from shared.hooks.records import ArchiveResultRecord, emit
from shared.platforms import hook as platform_hook
from shared.platforms import reddit as reddit_post
from shared.platforms.chain import store_media
from shared.platforms.hook import POST_FILE, keep_post
from shared.platforms.http import Client, warc_log
from shared.platforms.reddit_thread import (
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

PLUGIN = "reddit"
WARC_NAME = "reddit.warc.gz"
SOFTWARE = "discourse-link-archiver reddit plugin (warcio)"
KEPT_FILES = (WARC_NAME, "page.html", "thread.json", "thread.html", "meta.json", POST_FILE, "media")
"""What the hook writes (forgotten when the page declines)."""


async def fetch(client: Client, url: str) -> dict[str, Any]:
    """{url, final_url, status, error, kind, body (bytes)}; never raises."""
    got = await client.get(url)
    return {
        "url": url,
        "final_url": got.final_url,
        "status": got.status,
        "error": f"{got.error}: {got.message}" if got.error else None,
        "kind": got.error,
        "body": got.body,
        "declined": got.declined,
    }


async def html_page(
    client: Client, url: str, bases: list[tuple[str, str]]
) -> tuple[str | None, list[dict[str, Any]]]:
    """(name of the base whose page worked, attempts); writes page.html."""
    attempts = []
    for name, base in bases:
        got = await fetch(client, on_host(base, url))
        seen = {k: v for k, v in got.items() if k != "body"}
        if got["declined"]:
            attempts.append({**seen, "verdict": "declined"})
            return None, attempts
        text = got["body"].decode("utf-8", errors="replace")
        verdict = "error" if got["error"] else classify_page(got["status"], got["final_url"], text)
        attempts.append({**seen, "verdict": verdict})
        if verdict == "ok":
            await asyncio.to_thread(Path("page.html").write_bytes, got["body"])
            return name, attempts
    return None, attempts


def keep_thread(body: bytes, thread: Thread) -> None:
    """thread.json, thread.html and meta.json."""
    Path("thread.json").write_bytes(body)
    Path("thread.html").write_text(thread_html(thread), encoding="utf-8")
    meta: dict[str, Any] = {**thread_metadata(thread).as_dict(), "has_video": thread.has_video}
    Path("meta.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False))


async def thread_json(
    client: Client, url: str, base: str, settings: dict[str, Any]
) -> tuple[bool, dict[str, Any]]:
    """(worked, attempt); writes thread.json, thread.html, meta.json and the post."""
    got = await fetch(client, on_host(base, url, json_suffix=True))
    attempt = {k: v for k, v in got.items() if k != "body"}
    if got["declined"]:
        attempt["verdict"] = "declined"
        return False, attempt
    if got["kind"] is not None or got["status"] != 200:
        ok_status = got["status"] is not None and got["kind"] is None
        attempt["verdict"] = classify_page(got["status"], "", "") if ok_status else "error"
        return False, attempt
    try:
        thread = parse_thread(json.loads(got["body"]))
    except (ValueError, NotAThread) as exc:  # a login page or a block page instead of JSON
        attempt.update(verdict="not_json", error=str(exc)[:200])
        return False, attempt
    await asyncio.to_thread(keep_thread, got["body"], thread)
    depth, limit = int(settings["REDDIT_REPLY_DEPTH"]), int(settings["REDDIT_REPLIES"])
    post = reddit_post.outcome(thread, url, got["status"], depth, limit).post
    if post is not None:
        await store_media(client, post, Path.cwd())
        await asyncio.to_thread(keep_post, post, None)
    attempt["verdict"] = "ok"
    return True, attempt


def outcome(attempts: list[dict[str, Any]]) -> str:
    """The error code when nothing worked (whether it is retried: shared.hooks.error_codes)."""
    verdicts = {a["verdict"] for a in attempts}
    if "blocked" in verdicts:
        return "E_REDDIT_BLOCKED"
    for attempt in attempts:  # refused target, timeout, stall, DNS, 5xx ...
        if attempt["verdict"] == "error":
            kind = attempt.get("kind")
            if kind:
                return code("REDDIT", kind)
            status = attempt.get("status")
            return http_code("REDDIT", status) if status and status >= 400 else "E_REDDIT_FAILED"
    if "login" in verdicts:
        return "E_REDDIT_LOGIN_WALL"
    if "over18" in verdicts:
        return "E_REDDIT_AGE_GATE"
    return "E_REDDIT_NOT_FOUND"


def declined(attempts: list[dict[str, Any]]) -> str | None:
    """Why an answer asked not to be archived, or None."""
    return next((a["declined"] for a in attempts if a["verdict"] == "declined"), None)


def forget_everything() -> None:
    """Delete what the hook wrote before an answer declined: nothing of the page is kept."""
    for path in Path.cwd().iterdir():
        if path.name in KEPT_FILES and path.is_dir():
            shutil.rmtree(path)
        elif path.name in KEPT_FILES:
            path.unlink()


async def capture(url: str, settings: dict[str, Any]) -> dict[str, Any]:
    """The page, the thread JSON and the post; the report of every attempt."""
    # the platform hooks' client and caps; no operator cookies: the page and thread are kept
    # as anyone sees them
    steps = replace(platform_hook.settings(PLUGIN, settings, (), url), cookies=None)
    with (
        warc_log(Path(WARC_NAME), SOFTWARE) as warc,
        platform_hook.client(PLUGIN, settings, steps, warc) as client,
    ):
        bases = [("old.reddit", str(settings["REDDIT_OLD_BASE"])),
                 ("www.reddit", str(settings["REDDIT_WWW_BASE"]))]  # fmt: skip
        html_source, attempts = await html_page(client, url, bases)
        json_ok = False
        if thread_path(url) and not declined(attempts):
            json_ok, attempt = await thread_json(
                client, url, str(settings["REDDIT_JSON_BASE"]), settings
            )
            attempts.append(attempt)
    return {"url": url, "html_source": html_source, "json": json_ok, "attempts": attempts}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    args, _ = parser.parse_known_args()
    if not is_reddit(args.url):
        emit(ArchiveResultRecord(status="skipped", output_str="not a Reddit link"))
        return 0
    report = asyncio.run(capture(args.url, hook_settings(__file__)))
    html_source, json_ok, attempts = report["html_source"], report["json"], report["attempts"]
    why_not = declined(attempts)
    if why_not is not None:
        forget_everything()
        output = f"declined: the page asks not to be archived ({why_not})"
        emit(
            ArchiveResultRecord(status="failed", output_str=output, error_code="E_REDDIT_DECLINED")
        )
        return 0
    Path("reddit.json").write_text(json.dumps(report, indent=1))
    if html_source or json_ok:
        parts = [p for p in (html_source, "json" if json_ok else None) if p]
        why = ", ".join(f"{a['url']}: {a['verdict']}" for a in attempts if a["verdict"] != "ok")
        summary = " + ".join(parts) + (f" ({why})" if why else "")
        emit(ArchiveResultRecord(status="succeeded", output_str=summary[:500]))
        return 0
    ending = outcome(attempts)
    why = "; ".join(f"{a['url']}: {a['verdict']} {a['error'] or a['status']}" for a in attempts)
    emit(ArchiveResultRecord(status="failed", output_str=why[:500], error_code=ending))
    return 1 if retry_worthy(ending) else 0


if __name__ == "__main__":
    sys.exit(main())
